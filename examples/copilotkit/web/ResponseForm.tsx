// The fields of an interrupt's `responseSchema` (JSON Schema, as the bridge sends a step's resume
// schema): a text box per string, a number box per number, a list per enum, a checkbox per
// optional yes/no. What the person fills in is read back typed as the schema says.

/** One property of a `responseSchema`, as far as the card reads it. */
export interface SchemaProperty {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
}

/** The field for one property of the answer. */
export function Field({ id, name, property, required }: { id: string; name: string; property: SchemaProperty; required: boolean }) {
  const label = `${property.title ?? name}${required ? '' : ' (optional)'}`;
  if (property.type === 'boolean')
    return (
      <label className="field check" htmlFor={id}>
        <input id={id} name={name} type="checkbox" /> {label}
      </label>
    );
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {Array.isArray(property.enum) ? (
        <select id={id} name={name} required={required}>
          {property.enum.map((value) => (
            <option key={String(value)}>{String(value)}</option>
          ))}
        </select>
      ) : property.type === 'number' || property.type === 'integer' ? (
        <input id={id} name={name} type="number" required={required} />
      ) : (
        <textarea id={id} name={name} rows={3} required={required} />
      )}
    </div>
  );
}

/** The form's answers, typed as the schema says; an optional field left empty is left out. */
export function valuesOf(form: HTMLFormElement, fields: Array<[string, SchemaProperty]>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, property] of fields) {
    const input = form.elements.namedItem(name) as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement | null;
    if (!input) continue;
    if (property.type === 'boolean') values[name] = (input as HTMLInputElement).checked;
    else if (input.value !== '') values[name] = property.type === 'number' || property.type === 'integer' ? Number(input.value) : input.value;
  }
  return values;
}
