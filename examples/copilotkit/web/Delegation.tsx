import { defineToolCallRenderer, ToolCallStatus } from '@copilotkit/react-core/v2';
import { z } from 'zod';

/**
 * The card for the demo agent's delegation to its `researcher` sub-agent (the tool Mastra makes of
 * it, `agent-researcher`): what was asked, and whether the sub-agent is done. The sub-agent's own
 * answer follows in the chat as its own message (AG-UI `SUBAGENT_*` events around it).
 */
export const delegationCard = defineToolCallRenderer({
  name: 'agent-researcher',
  args: z.object({ prompt: z.string() }),
  render: ({ args, status }) => (
    <section className="delegation" aria-label="Delegated to the researcher">
      <p>
        <strong>Researcher</strong> · {status === ToolCallStatus.Complete ? 'done' : 'working…'}
      </p>
      <p>{args.prompt}</p>
    </section>
  ),
});
