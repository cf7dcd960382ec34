/**
 * A connection URL fit for a log line or an error message: its password masked.
 *
 * @example
 * redactedUrl('postgres://app:s3cret@db:5432/app'); // 'postgres://app:***@db:5432/app'
 */
export function redactedUrl(url: string): string {
  if (!URL.canParse(url)) return url.replace(/:[^:@/]*@/, ':***@');
  const parsed = new URL(url);
  if (!parsed.password) return url;
  parsed.password = '***';
  return parsed.href;
}
