// The causal graph of a replay, laid out in the page: loaded only on the replay page (its own
// chunk, with the layout library). dagre ranks it left to right from causes to effects; a run of
// one agent's steps is one node until clicked; caused_by edges solid, decided_on and reads dashed,
// edges in a cycle and dangling references drawn red, an arrow that runs back drawn as an arc. SVG
// with a title per node, so it reads without a mouse; fit to width in its own box, with zoom.
import type { Answer } from '@audit-ledger/sdk';
import { useState } from 'preact/hooks';
import dagre from '@dagrejs/dagre';

/** The causal graph as the service answers it (the SDK's generated type). */
export type Graph = Answer<'getReplayCausalGraph'>;

const W = 190;
const H = 46;

/** A run of one agent's steps shown as one node until opened: at least this many events. */
export const GROUP_MIN = 5;

type Node = Graph['nodes'][number];
type Edge = Graph['edges'][number];

/**
 * Runs of one agent's steps: maximal sequences, in seq order, of events of the same agent where
 * each is caused by the one before and depends on nothing else but the context it reads, and
 * causes nothing but the next (no decision inputs, reviews or denials inside, not in a cycle).
 * Each run of GROUP_MIN or more is one group; the context its steps read is drawn as read by the
 * group, so what the run relied on stays in sight.
 */
export function agentRuns(graph: Graph): Array<{ id: string; agent: string; members: string[] }> {
  const inCycle = new Set(graph.cycles.flat());
  const ins = new Map<string, Edge[]>();
  const outs = new Map<string, Edge[]>();
  for (const e of graph.edges) {
    // An edge runs from the effect (source) to what it depends on (target).
    ins.set(e.source, [...(ins.get(e.source) ?? []), e]);
    outs.set(e.target, [...(outs.get(e.target) ?? []), e]);
  }
  const agentOf = (n: Node) => String((n.metadata as { agent_id?: unknown }).agent_id ?? '');
  const seqOf = (n: Node) => Number((n.metadata as { seq?: unknown }).seq ?? 0);
  const events = graph.nodes.filter((n) => n.type === 'event' && agentOf(n) !== '' && !inCycle.has(n.id)).sort((a, b) => seqOf(a) - seqOf(b));
  const linked = (prev: Node, next: Node) => {
    const into = ins.get(next.id) ?? [];
    const from = outs.get(prev.id) ?? [];
    const cause = into.filter((e) => e.type !== 'reads');
    return agentOf(prev) === agentOf(next) && cause.length === 1 && cause[0]?.target === prev.id && cause[0]?.type === 'caused_by' && from.length === 1 && from[0]?.source === next.id;
  };
  const runs: Array<{ id: string; agent: string; members: string[] }> = [];
  let run: Node[] = [];
  const close = () => {
    if (run.length >= GROUP_MIN) runs.push({ id: `group:${(run[0] as Node).id}`, agent: agentOf(run[0] as Node), members: run.map((n) => n.id) });
    run = [];
  };
  for (const n of events) {
    const prev = run.at(-1);
    if (prev && linked(prev, n)) run.push(n);
    else {
      close();
      run = [n];
    }
  }
  close();
  return runs;
}

export default function CausalGraph({ graph: full, onOpen }: { graph: Graph; onOpen: (logId: string) => void }) {
  const [opened, setOpened] = useState<Set<string>>(new Set());
  const runs = agentRuns(full).filter((r) => !opened.has(r.id));
  // The graph as drawn: each closed run is one node, its inner edges gone, its outer edges on it.
  const groupOf = new Map<string, string>();
  for (const r of runs) for (const m of r.members) groupOf.set(m, r.id);
  const at = (id: string) => groupOf.get(id) ?? id;
  const nodes: Node[] = [
    ...full.nodes.filter((n) => !groupOf.has(n.id)),
    ...runs.map((r) => ({ id: r.id, type: 'group', label: `${r.agent}: ${r.members.length} steps`, metadata: { members: r.members } }) as unknown as Node),
  ];
  const seen = new Set<string>();
  const edges = full.edges
    .map((e) => ({ ...e, source: at(e.source), target: at(e.target) }))
    .filter((e) => e.source !== e.target && !seen.has(`${e.source}>${e.target}>${e.type}`) && seen.add(`${e.source}>${e.target}>${e.type}`));
  const graph: Graph = { ...full, nodes, edges };
  const inCycle = new Set(graph.cycles.flat());
  // Laid out by dagre (ranks left to right, from cause to effect; it breaks cycles for the layout only).
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 60, marginx: 20, marginy: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.id, { width: W, height: H });
  for (const e of graph.edges) if (g.hasNode(e.source) && g.hasNode(e.target)) g.setEdge(e.target, e.source);
  dagre.layout(g);
  const pos = new Map<string, { x: number; y: number }>();
  for (const n of graph.nodes) {
    const p = g.node(n.id) as { x: number; y: number };
    pos.set(n.id, { x: p.x - W / 2, y: p.y - H / 2 });
  }
  const width = Math.max(...[...pos.values()].map((p) => p.x + W + 20), 300);
  const height = Math.max(...[...pos.values()].map((p) => p.y + H + 20), 120) + graph.dangling.length * 20 + 40;
  // Fit to the page's width by default (never wider than drawn); zoom in and scroll to pan, inside its box.
  const [zoom, setZoom] = useState<number | null>(null);
  const shown = zoom === null ? { width: '100%', style: undefined } : { width: String(Math.round(width * zoom)) };
  return (
    <figure>
      <div class="actions" role="group" aria-label="Graph zoom">
        <button type="button" class="secondary" onClick={() => setZoom(null)} aria-pressed={zoom === null}>
          Fit to width
        </button>
        <button type="button" class="secondary" onClick={() => setZoom((z) => Math.min(2, (z ?? 0.5) * 1.5))}>
          Zoom in
        </button>
        <button type="button" class="secondary" onClick={() => setZoom((z) => Math.max(0.1, (z ?? 1) / 1.5))}>
          Zoom out
        </button>
        {opened.size > 0 && (
          <button type="button" class="secondary" onClick={() => setOpened(new Set())}>
            Group the steps again
          </button>
        )}
      </div>
      <div class="graph-box" data-testid="graph-box">
      <svg width={shown.width} viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="xMinYMin meet" class={zoom === null ? 'fit' : undefined} role="group" aria-label={`Causal graph: ${graph.nodes.length} nodes, ${graph.edges.length} edges, ${graph.cycles.length} cycles, ${graph.dangling.length} dangling references`} data-testid="causal-graph">
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill="#5f6b7a" />
          </marker>
        </defs>
        {graph.edges.map((e) => {
          const a = pos.get(e.source);
          const b = pos.get(e.target);
          if (!a || !b) return null;
          const red = inCycle.has(e.source) && inCycle.has(e.target) && e.type === 'caused_by';
          // An arrow that would run right to left (a cycle's closing edge, a link back in time) is
          // drawn as an arc below the nodes, so it never hides behind the chain it closes.
          if (a.x <= b.x) {
            const x1 = b.x + W / 2;
            const x2 = a.x + W / 2;
            const y = Math.max(a.y, b.y) + H;
            return (
              <path
                key={`${e.source}-${e.target}-${e.type}`}
                class="edge back"
                data-type={e.type}
                d={`M ${x1} ${b.y + H} C ${x1} ${y + 40}, ${x2} ${y + 40}, ${x2} ${a.y + H}`}
                fill="none"
                stroke={red ? '#a50e0e' : '#5f6b7a'}
                stroke-width={red ? 2.5 : 1.5}
                stroke-dasharray={e.type === 'caused_by' ? undefined : '5 4'}
                marker-end="url(#arrow)"
              >
                <title>{`${e.type} (${e.label})`}</title>
              </path>
            );
          }
          return (
            <line
              key={`${e.source}-${e.target}-${e.type}`}
              class="edge"
              data-type={e.type}
              x1={b.x + W}
              y1={b.y + H / 2}
              x2={a.x}
              y2={a.y + H / 2}
              stroke={red ? '#a50e0e' : '#5f6b7a'}
              stroke-width={red ? 2.5 : 1.5}
              stroke-dasharray={e.type === 'caused_by' ? undefined : '5 4'}
              marker-end="url(#arrow)"
            >
              <title>{`${e.type} (${e.label})`}</title>
            </line>
          );
        })}
        {graph.nodes.map((n) => {
          const p = pos.get(n.id) as { x: number; y: number };
          const source = n.type === 'context_source';
          const group = n.type === 'group';
          const open = () => (group ? setOpened(new Set([...opened, n.id])) : !source && onOpen(n.id));
          const shown = n.label.length > 24 ? `${n.label.slice(0, 23)}…` : n.label;
          // The accessible name starts with the text on screen, then the whole label when it was cut.
          const named = `${shown}${shown !== n.label ? ` (${n.label})` : ''}`;
          return (
            // Every node that acts is a button for the keyboard too (Tab to it, Enter or Space).
            <g
              key={n.id}
              class={`${source ? 'node' : 'node clickable'}${group ? ' group' : ''}`}
              data-type={n.type}
              transform={`translate(${p.x},${p.y})`}
              onClick={open}
              {...(source
                ? { role: 'img', 'aria-label': `${named}: a context source` }
                : {
                    role: 'button',
                    // lowercase: an SVG attribute (Preact sets SVG props as attributes, which are case-sensitive there)
                    tabindex: 0,
                    'aria-label': group ? `${named}: show each step` : `${named}${inCycle.has(n.id) ? ' (in a cycle)' : ''}: open the entry`,
                    onKeyDown: (e: KeyboardEvent) => {
                      if (e.key === 'Enter' || e.key === ' ') {
                        e.preventDefault();
                        open();
                      }
                    },
                  })}
            >
              <title>{group ? `${n.label}: click to show each step` : `${n.label}${inCycle.has(n.id) ? ' (in a cycle)' : ''}`}</title>
              <rect width={W} height={H} rx={source ? 22 : 6} fill={source ? '#fef7e0' : group ? '#e6f4ea' : '#eef3fd'} stroke={inCycle.has(n.id) ? '#a50e0e' : '#3d4450'} stroke-width={group ? 2.5 : 1} />
              <text x={10} y={28} font-size="13" fill="#1b1f24">
                {shown}
              </text>
            </g>
          );
        })}
        {graph.dangling.map((d, i) => {
          const p = pos.get(d.log_id);
          return p ? (
            <text key={`${d.log_id}-${d.field}`} x={20} y={height - (graph.dangling.length - i) * 20 + 10} font-size="12" fill="#a50e0e">
              dangling {d.field} → {d.reference}
            </text>
          ) : null;
        })}
      </svg>
      </div>
      <figcaption>
        Laid out by dagre, causes left of their effects. Arrows run from cause to effect; solid: caused by, dashed: read or decided on. Red: a cycle. Green: a run of one agent's steps, one node until clicked
        {runs.length > 0 ? ` (${runs.length} here)` : ''}. {graph.dangling.length > 0 ? `${graph.dangling.length} reference(s) name no event of the trace.` : ''}
      </figcaption>
    </figure>
  );
}
