import { useState, type FormEvent } from 'react';
import type { Interrupt } from '@copilotkit/react-core/v2';
import { Field, valuesOf, type SchemaProperty } from './ResponseForm';

/**
 * What the bridge puts in an interrupt's metadata: a tool approval's call (docs/human-in-the-loop.md
 * "Approvals"), a suspended step's payload (docs/workflows.md "Suspended for a person, resumed
 * from the client").
 */
interface InterruptMetadata {
  toolName?: string;
  args?: unknown;
  workflowId?: string;
  suspendPayload?: Record<string, unknown>;
}

interface ResponseSchema {
  properties?: Record<string, SchemaProperty>;
  required?: string[];
}

/** A step that suspended (a workflow's, or a tool's) waits for the data its `responseSchema` describes. */
const SUSPENDED = new Set(['tool_suspended', 'workflow_suspended']);

/**
 * One card per interrupt: what the agent wants to do (a call's arguments), or what a suspended step
 * shows (its payload: the draft to approve) with a form for the answer; Approve and Decline.
 */
export function Approval({ interrupt, onAnswer }: { interrupt: Interrupt | null; onAnswer: (answer: Record<string, unknown>) => void }) {
  const [answered, setAnswered] = useState<string>();
  if (!interrupt) return null;
  const metadata = (interrupt.metadata ?? {}) as InterruptMetadata;
  const suspended = SUSPENDED.has(interrupt.reason);
  const schema = (suspended ? interrupt.responseSchema : undefined) as ResponseSchema | undefined;
  const required = new Set(schema?.required ?? []);
  const properties = Object.entries(schema?.properties ?? {});
  // A required yes/no (`approved`) is the card's two buttons; every other property is a field. A tool approval is a yes/no.
  const decision = suspended ? properties.find(([key, p]) => p.type === 'boolean' && required.has(key))?.[0] : 'approved';
  const fields = properties.filter(([key]) => key !== decision);
  const who = metadata.workflowId ?? metadata.toolName?.replace(/^workflow-/, '');
  const title = suspended ? `${who ?? 'A step'} waits for you` : `Allow ${metadata.toolName ?? 'this tool'}?`;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const approve = (event.nativeEvent as SubmitEvent).submitter?.getAttribute('value') !== 'decline';
    setAnswered(decision ? (approve ? 'Approved' : 'Declined') : 'Sent');
    onAnswer({ ...valuesOf(event.currentTarget, fields), ...(decision && { [decision]: approve }) });
  };
  const id = `approval-${interrupt.id.replace(/[^\w-]/g, '_')}`;
  return (
    <section className="approval" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {interrupt.message && <p>{interrupt.message}</p>}
      {suspended ? <Payload payload={metadata.suspendPayload} /> : metadata.args !== undefined && <pre>{JSON.stringify(metadata.args, null, 2)}</pre>}
      {answered === undefined ? (
        <form onSubmit={submit}>
          {fields.map(([key, property]) => (
            <Field key={key} id={`${id}-${key}`} name={key} property={property} required={required.has(key)} />
          ))}
          <div className="actions">
            {decision ? (
              <>
                <button type="submit" value="approve">
                  Approve
                </button>
                {/* Declining needs no answer filled in. */}
                <button type="submit" value="decline" formNoValidate>
                  Decline
                </button>
              </>
            ) : (
              <button type="submit" value="send">
                Send
              </button>
            )}
          </div>
        </form>
      ) : (
        // Until the resumed run takes the interrupt away (and the card with it): no second answer.
        <p role="status">{answered}: the agent goes on.</p>
      )}
    </section>
  );
}

/** What a suspended step shows for review (the draft), each value as text; a long one scrolls inside the card. */
function Payload({ payload }: { payload: Record<string, unknown> | undefined }) {
  const entries = Object.entries(payload ?? {});
  if (entries.length === 0) return null;
  return (
    <dl className="payload" tabIndex={0} aria-label="What waits for your answer">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>{typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</dd>
        </div>
      ))}
    </dl>
  );
}
