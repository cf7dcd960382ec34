import { useState } from 'react';
import type { Interrupt } from '@copilotkit/react-core/v2';

/** What the bridge puts in a tool approval's interrupt (docs/human-in-the-loop.md "Approvals"). */
interface ToolApproval {
  toolName?: string;
  args?: unknown;
}

/** One approval card: what the agent wants to do, and the two answers. */
export function Approval({ interrupt, onAnswer }: { interrupt: Interrupt | null; onAnswer: (approved: boolean) => void }) {
  const [answer, setAnswer] = useState<boolean>();
  if (!interrupt) return null;
  const { toolName, args } = (interrupt.metadata ?? {}) as ToolApproval;
  const answerWith = (approved: boolean) => {
    setAnswer(approved);
    onAnswer(approved);
  };
  return (
    <section className="approval" aria-labelledby={`approval-${interrupt.id}`}>
      <h2 id={`approval-${interrupt.id}`}>{toolName ? `Allow ${toolName}?` : 'The agent waits for your answer'}</h2>
      {interrupt.message && <p>{interrupt.message}</p>}
      {args !== undefined && <pre>{JSON.stringify(args, null, 2)}</pre>}
      {answer === undefined ? (
        <div className="actions">
          <button type="button" onClick={() => answerWith(true)}>
            Approve
          </button>
          <button type="button" onClick={() => answerWith(false)}>
            Decline
          </button>
        </div>
      ) : (
        // Until the resumed run takes the interrupt away (and the card with it): no second answer.
        <p role="status">{answer ? 'Approved' : 'Declined'}: the agent goes on.</p>
      )}
    </section>
  );
}
