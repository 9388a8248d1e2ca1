// What a span says, whichever convention its instrumentation follows (docs/integrations.md,
// "Agent telemetry conventions"). Pure: a span's name, attributes and status in; what it is (a
// model call, a tool call, an agent run, a retrieval, a guardrail…) and the vocabulary fields the
// forensics read out. Four conventions, tried in this order, the first that claims the span wins:
//
// - OpenTelemetry GenAI semantic conventions: `gen_ai.operation.name` (chat, execute_tool,
//   invoke_agent, retrieval, …), `gen_ai.tool.*`, `gen_ai.usage.*`, `gen_ai.output.messages`.
// - OpenInference (Arize Phoenix and its LangChain, LlamaIndex, OpenAI and OpenAI Agents
//   instrumentations): `openinference.span.kind`, `llm.*`, `tool.*`, `input.value`/`output.value`,
//   `retrieval.documents.<i>.document.*`.
// - OpenLLMetry / Traceloop: `traceloop.span.kind` (workflow, task, agent, tool) with
//   `traceloop.entity.*`, and its model spans' `llm.request.type`, `gen_ai.prompt.*`,
//   `gen_ai.completion.*`, `llm.usage.*`.
// - The Vercel AI SDK's classic spans: `ai.operationId` (`ai.generateText`, `ai.streamText`,
//   `ai.toolCall`, `ai.generateText.doGenerate`, …) with `ai.toolCall.*`, `ai.usage.*`,
//   `ai.response.*`, `ai.telemetry.functionId` and `ai.telemetry.metadata.*`.
//
// Nothing here drops what was sent: the whole span stays under `data.otel` (map.ts).
import type { Json, JsonObject } from '@audit-ledger/core';
import { asArray, documents, genaiToolCalls, genaiToolResults, indexed, llamaIndexNodes, num, obj, oldest, parsed, put, str, unwrapLangChain } from './attributes.js';

export type SpanKind = 'llm' | 'embedding' | 'tool' | 'agent' | 'retrieval' | 'rerank' | 'guardrail' | 'evaluation' | 'chain' | 'step' | 'create_agent';
export type Convention = 'genai' | 'openinference' | 'openllmetry' | 'vercel-ai';

export interface SpanReading {
  convention: Convention | null;
  kind: SpanKind | null;
  /** For a GenAI operation with no kind of its own: `gen_ai.<operation>`. */
  operation: string | null;
  /** Vocabulary fields for `data` (tool, arguments, result, model, tokens, tool_calls, documents, …). */
  fields: JsonObject;
  /** The agent, session and workflow the span names itself (inherited by its descendants in map.ts). */
  agent: string | null;
  session: string | null;
  workflow: string | null;
}

const GENAI_KIND: Record<string, SpanKind> = {
  chat: 'llm',
  text_completion: 'llm',
  generate_content: 'llm',
  embeddings: 'embedding',
  execute_tool: 'tool',
  invoke_agent: 'agent',
  create_agent: 'create_agent',
  retrieval: 'retrieval',
  agent_step: 'step',
  evaluate: 'evaluation',
  evaluation: 'evaluation',
  rerank: 'rerank',
  guardrail: 'guardrail',
};

function genai(a: JsonObject): SpanReading | null {
  const op = str(a['gen_ai.operation.name']);
  const source = str(a['gen_ai.data_source.id']);
  if (op === null && source === null) return null;
  const fields: JsonObject = {};
  put(fields, 'operation', op);
  let kind: SpanKind | null = op !== null ? (GENAI_KIND[op] ?? null) : null;
  // A span naming a data source that is not a model or tool call is a retrieval (as before).
  if (source !== null && kind !== 'tool' && kind !== 'llm' && kind !== 'embedding') kind = 'retrieval';
  put(fields, 'tool', str(a['gen_ai.tool.name']));
  put(fields, 'tool_call_id', str(a['gen_ai.tool.call.id']));
  put(fields, 'arguments', parsed(a['gen_ai.tool.call.arguments']));
  put(fields, 'result', parsed(a['gen_ai.tool.call.result']));
  put(fields, 'agent', str(a['gen_ai.agent.name']));
  put(fields, 'model', str(a['gen_ai.response.model']) ?? str(a['gen_ai.request.model']));
  put(fields, 'provider', str(a['gen_ai.provider.name']) ?? str(a['gen_ai.system']));
  put(fields, 'prompt_tokens', num(a['gen_ai.usage.input_tokens']));
  put(fields, 'completion_tokens', num(a['gen_ai.usage.output_tokens']));
  put(fields, 'finish_reasons', asArray(parsed(a['gen_ai.response.finish_reasons'])).map((r) => (typeof r === 'string' ? r : JSON.stringify(r))));
  if (kind === 'llm') {
    put(fields, 'tool_calls', genaiToolCalls(a['gen_ai.output.messages']));
    put(fields, 'tool_results', genaiToolResults(a['gen_ai.input.messages']));
  }
  put(fields, 'source_id', source);
  put(fields, 'evaluation', str(a['gen_ai.evaluation.name']));
  put(fields, 'score', num(a['gen_ai.evaluation.score.value']) ?? (typeof a['gen_ai.evaluation.score.value'] === 'number' ? a['gen_ai.evaluation.score.value'] : undefined));
  return {
    convention: 'genai',
    kind,
    operation: op,
    fields,
    agent: str(a['gen_ai.agent.id']) ?? str(a['gen_ai.agent.name']),
    session: str(a['gen_ai.conversation.id']) ?? str(a['session.id']),
    workflow: null,
  };
}

const OI_KIND: Record<string, SpanKind> = { LLM: 'llm', EMBEDDING: 'embedding', TOOL: 'tool', AGENT: 'agent', RETRIEVER: 'retrieval', RERANKER: 'rerank', GUARDRAIL: 'guardrail', EVALUATOR: 'evaluation', CHAIN: 'chain', PROMPT: 'chain' };

function openinference(name: string, a: JsonObject): SpanReading | null {
  const k = str(a['openinference.span.kind']);
  if (k === null) return null;
  const kind = OI_KIND[k.toUpperCase()] ?? null;
  const fields: JsonObject = {};
  const input = parsed(a['input.value']);
  const output = parsed(a['output.value']);
  if (kind === 'tool') {
    put(fields, 'tool', str(a['tool.name']) ?? str(a['tool_call.function.name']) ?? name);
    put(fields, 'tool_call_id', str(a['tool_call.id']));
    put(fields, 'arguments', parsed(a['tool_call.function.arguments']) ?? input);
    put(fields, 'result', unwrapLangChain(output));
  }
  if (kind === 'llm' || kind === 'embedding') {
    put(fields, 'model', str(a['llm.response.model_name']) ?? str(a['llm.model_name']) ?? str(a['embedding.model_name']));
    put(fields, 'provider', str(a['llm.provider']) ?? str(a['llm.system']));
    put(fields, 'prompt_tokens', num(a['llm.token_count.prompt']));
    put(fields, 'completion_tokens', num(a['llm.token_count.completion']));
    put(fields, 'finish_reasons', asArray(a['llm.finish_reason']).filter((r): r is string => typeof r === 'string'));
    const calls: JsonObject[] = [];
    for (const m of indexed(a, 'llm.output_messages'))
      for (const c of indexed(m, 'message.tool_calls')) {
        const call: JsonObject = {};
        put(call, 'id', str(c['tool_call.id']));
        put(call, 'name', str(c['tool_call.function.name']));
        calls.push(call);
      }
    put(fields, 'tool_calls', calls);
    put(fields, 'tool_results', indexed(a, 'llm.input_messages').filter((m) => str(m['message.tool_call_id']) !== null).map((m) => ({ id: str(m['message.tool_call_id']) as string })));
  }
  const meta = obj(parsed(a.metadata) as Json);
  if (kind === 'retrieval' || kind === 'rerank') {
    const docs = documents(a, kind === 'retrieval' ? 'retrieval.documents' : 'reranker.output_documents');
    put(fields, 'documents', docs);
    put(fields, 'source_id', (meta ? str(meta.source_id ?? meta.source) : null) ?? str(docs.find((d) => str(d.source) !== null)?.source) ?? name);
    put(fields, 'as_of', oldest(docs));
    put(fields, 'query', typeof input === 'string' ? input : undefined);
    // How fresh it must be, when the retriever says so in its metadata (the staleness check reads these).
    put(fields, 'source_type', meta ? str(meta.source_type) : null);
    put(fields, 'max_age_seconds', meta ? num(meta.max_age_seconds) : null);
  }
  if (kind === 'guardrail' || kind === 'evaluation') {
    put(fields, kind === 'guardrail' ? 'policy_id' : 'evaluation', name);
    put(fields, 'output', output);
  }
  if (kind === 'agent') put(fields, 'agent', str(a['agent.name']) ?? name);
  return {
    convention: 'openinference',
    kind,
    operation: null,
    fields,
    agent: str(a['agent.name']) ?? (kind === 'agent' ? name : null) ?? (meta ? str(meta.agent_id ?? meta.agent) : null),
    session: str(a['session.id']),
    workflow: null,
  };
}

function openllmetry(name: string, a: JsonObject): SpanReading | null {
  const k = str(a['traceloop.span.kind']);
  const requestType = str(a['llm.request.type']);
  if (k === null && requestType === null) return null;
  const fields: JsonObject = {};
  const entity = str(a['traceloop.entity.name']) ?? name.replace(/\.(workflow|task|agent|tool)$/, '');
  let kind: SpanKind | null = null;
  if (k === 'tool') {
    kind = 'tool';
    put(fields, 'tool', entity);
    const input = obj(parsed(a['traceloop.entity.input']) as Json);
    // The SDK records {args: [...], kwargs: {...}}: one object argument is the arguments.
    const args = input && Array.isArray(input.args) && input.args.length === 1 ? input.args[0] : (input?.kwargs ?? input ?? undefined);
    put(fields, 'arguments', args as Json | undefined);
    put(fields, 'result', parsed(a['traceloop.entity.output']));
  } else if (k === 'agent') {
    kind = 'agent';
    put(fields, 'agent', entity);
  } else if (k === 'task' && name.endsWith('.retrieve')) {
    // A LlamaIndex.TS retriever, as Traceloop's LlamaIndex instrumentation records it
    // (`vector_index_retriever.retrieve`, a task): a retrieval, its nodes the documents.
    kind = 'retrieval';
    const docs = llamaIndexNodes(parsed(a['traceloop.entity.output']));
    put(fields, 'documents', docs);
    put(fields, 'source_id', str(docs.find((d) => str(d.source) !== null)?.source) ?? str(a['traceloop.entity.name']) ?? name.slice(0, -'.retrieve'.length));
    put(fields, 'as_of', oldest(docs));
    const query = obj(obj(parsed(a['traceloop.entity.input']) as Json)?.kwargs)?.query;
    put(fields, 'query', typeof query === 'string' ? query : undefined);
  } else if (k === 'workflow' || k === 'task') kind = 'chain';
  else if (requestType === 'chat' || requestType === 'completion') kind = 'llm';
  else if (requestType === 'embedding') kind = 'embedding';
  else if (requestType === 'rerank') kind = 'rerank';
  if (kind === 'llm' || kind === 'embedding') {
    put(fields, 'model', str(a['gen_ai.response.model']) ?? str(a['gen_ai.request.model']) ?? str(a['llm.response.model']) ?? str(a['llm.request.model']));
    put(fields, 'provider', str(a['gen_ai.system']) ?? str(a['gen_ai.provider.name']) ?? str(a['llm.vendor']));
    put(fields, 'prompt_tokens', num(a['gen_ai.usage.input_tokens']) ?? num(a['gen_ai.usage.prompt_tokens']) ?? num(a['llm.usage.prompt_tokens']));
    put(fields, 'completion_tokens', num(a['gen_ai.usage.output_tokens']) ?? num(a['gen_ai.usage.completion_tokens']) ?? num(a['llm.usage.completion_tokens']));
    const completions = indexed(a, 'gen_ai.completion');
    put(fields, 'finish_reasons', completions.map((c) => str(c.finish_reason)).filter((r): r is string => r !== null));
    const calls: JsonObject[] = [];
    for (const c of completions)
      for (const t of indexed(c, 'tool_calls')) {
        const call: JsonObject = {};
        put(call, 'id', str(t.id));
        put(call, 'name', str(t.name));
        calls.push(call);
      }
    put(fields, 'tool_calls', calls.length > 0 ? calls : genaiToolCalls(a['gen_ai.output.messages']));
    put(fields, 'tool_results', indexed(a, 'gen_ai.prompt').filter((m) => str(m.tool_call_id) !== null).map((m) => ({ id: str(m.tool_call_id) as string })));
  }
  return {
    convention: 'openllmetry',
    kind,
    operation: null,
    fields,
    agent: k === 'agent' ? entity : str(a['traceloop.association.properties.agent_id']),
    session: str(a['traceloop.association.properties.session_id']) ?? str(a['traceloop.association.properties.sessionId']),
    workflow: str(a['traceloop.workflow.name']),
  };
}

const VERCEL_RUN = /^ai\.(generateText|streamText|generateObject|streamObject)$/;
const VERCEL_CALL = /^ai\.(generateText\.doGenerate|streamText\.doStream|generateObject\.doGenerate|streamObject\.doStream)$/;
const VERCEL_EMBED = /^ai\.(embed|embedMany)(\.doEmbed)?$/;

function vercel(a: JsonObject): SpanReading | null {
  const op = str(a['ai.operationId']);
  if (op === null || !op.startsWith('ai.')) return null;
  const fields: JsonObject = {};
  let kind: SpanKind | null = null;
  const meta = (k: string) => str(a[`ai.telemetry.metadata.${k}`]);
  if (op === 'ai.toolCall') {
    kind = 'tool';
    put(fields, 'tool', str(a['ai.toolCall.name']));
    put(fields, 'tool_call_id', str(a['ai.toolCall.id']));
    put(fields, 'arguments', parsed(a['ai.toolCall.args'] ?? a['ai.toolCall.input']));
    put(fields, 'result', parsed(a['ai.toolCall.result'] ?? a['ai.toolCall.output']));
  } else if (VERCEL_RUN.test(op)) kind = 'agent';
  else if (VERCEL_CALL.test(op)) kind = 'llm';
  else if (VERCEL_EMBED.test(op)) kind = 'embedding';
  else if (op === 'ai.rerank' || op === 'ai.rerank.doRerank') kind = 'rerank';
  if (kind === 'llm' || kind === 'agent' || kind === 'embedding') {
    put(fields, 'model', str(a['ai.response.model']) ?? str(a['ai.model.id']));
    put(fields, 'provider', str(a['ai.model.provider']));
    put(fields, 'prompt_tokens', num(a['ai.usage.inputTokens']) ?? num(a['ai.usage.promptTokens']));
    put(fields, 'completion_tokens', num(a['ai.usage.outputTokens']) ?? num(a['ai.usage.completionTokens']));
    put(fields, 'finish_reasons', asArray(a['ai.response.finishReason']).filter((r): r is string => typeof r === 'string'));
  }
  if (kind === 'llm') {
    const calls = asArray(parsed(a['ai.response.toolCalls'])).map((c) => {
      const o = obj(c);
      const call: JsonObject = {};
      put(call, 'id', str(o?.toolCallId));
      put(call, 'name', str(o?.toolName));
      return call;
    });
    put(fields, 'tool_calls', calls);
    // The tool results the call was given: tool messages of its prompt (ai.prompt.messages).
    const results: JsonObject[] = [];
    for (const m of asArray(parsed(a['ai.prompt.messages'])))
      if (obj(m)?.role === 'tool')
        for (const c of asArray(obj(m)?.content)) {
          const id = str(obj(c)?.toolCallId);
          if (id !== null) results.push({ id });
        }
    put(fields, 'tool_results', results);
  }
  const functionId = str(a['ai.telemetry.functionId']);
  if (kind === 'agent') put(fields, 'agent', meta('agent_id') ?? meta('agentId') ?? functionId);
  return {
    convention: 'vercel-ai',
    kind,
    operation: null,
    fields,
    agent: meta('agent_id') ?? meta('agentId') ?? functionId,
    session: meta('session_id') ?? meta('sessionId'),
    workflow: meta('workflow_id') ?? meta('workflowId'),
  };
}

/** What a span is and says, by the first convention that claims it; a span none claims is plain. */
export function readSpan(name: string, a: JsonObject): SpanReading {
  return genai(a) ?? openinference(name, a) ?? openllmetry(name, a) ?? vercel(a) ?? { convention: null, kind: null, operation: null, fields: {}, agent: null, session: null, workflow: null };
}

/**
 * A guardrail's verdict: deny when the span failed or its output says it did not pass
 * (`passed`/`allowed`/`pass` false, or a `verdict`/`decision` of deny, block or fail), else allow.
 */
export function guardrailVerdict(r: SpanReading, failed: boolean): 'allow' | 'deny' {
  if (failed) return 'deny';
  const out = obj(r.fields.output);
  if (out === null) return 'allow';
  if (out.passed === false || out.allowed === false || out.pass === false) return 'deny';
  const said = str(out.verdict ?? out.decision ?? out.result);
  return said !== null && /^(deny|denied|block|blocked|fail|failed|reject|rejected)$/i.test(said) ? 'deny' : 'allow';
}

/** The event type of a span of this kind; `failed` is its status ERROR. */
export function eventTypeOf(r: SpanReading, failed: boolean): string {
  switch (r.kind) {
    case 'tool':
      return failed ? 'tool.failed' : 'tool.called';
    case 'llm':
    case 'embedding':
      return 'llm.call';
    case 'agent':
      return failed ? 'agent.failed' : 'agent.completed';
    case 'create_agent':
      return 'agent.created';
    case 'retrieval':
      return 'context.retrieved';
    case 'rerank':
      return 'context.reranked';
    case 'guardrail':
      return 'policy.evaluated';
    case 'evaluation':
      return 'evaluation.recorded';
    case 'chain':
      return failed ? 'chain.failed' : 'chain.completed';
    case 'step':
      return failed ? 'agent.step_failed' : 'agent.step';
    default:
      return r.operation !== null ? `gen_ai.${r.operation}` : 'otel.span';
  }
}
