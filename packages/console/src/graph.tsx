// The causal graph of a replay, laid out in the page: loaded only on the replay page (its own
// chunk). Layers by causal depth (an event one layer right of what caused it; context sources
// first), rows in timeline order; caused_by edges solid, decided_on and reads dashed, edges in a
// cycle and dangling references drawn red. SVG with a title per node, so it reads without a mouse.
import type { Answer } from '@audit-ledger/sdk';
import { useState } from 'preact/hooks';

/** The causal graph as the service answers it (the SDK's generated type). */
export type Graph = Answer<'getReplayCausalGraph'>;

const W = 190;
const H = 46;

export default function CausalGraph({ graph, onOpen }: { graph: Graph; onOpen: (logId: string) => void }) {
  const inCycle = new Set(graph.cycles.flat());
  const causes = new Map<string, string[]>();
  for (const e of graph.edges) if (e.type === 'caused_by' || e.type === 'reads') causes.set(e.source, [...(causes.get(e.source) ?? []), e.target]);
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const depthOf = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0; // a cycle: laid out where it is entered
    visiting.add(id);
    const d = Math.max(-1, ...(causes.get(id) ?? []).map(depthOf)) + 1;
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  const rows = new Map<number, number>();
  const pos = new Map<string, { x: number; y: number }>();
  for (const n of graph.nodes) {
    const d = n.type === 'context_source' ? 0 : depthOf(n.id);
    const r = rows.get(d) ?? 0;
    rows.set(d, r + 1);
    pos.set(n.id, { x: 20 + d * (W + 60), y: 20 + r * (H + 24) });
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
      </div>
      <div class="graph-box" data-testid="graph-box">
      <svg width={shown.width} viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="xMinYMin meet" class={zoom === null ? 'fit' : undefined} role="img" aria-label={`Causal graph: ${graph.nodes.length} nodes, ${graph.edges.length} edges, ${graph.cycles.length} cycles, ${graph.dangling.length} dangling references`} data-testid="causal-graph">
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
          return (
            <g key={n.id} class={source ? 'node' : 'node clickable'} transform={`translate(${p.x},${p.y})`} onClick={() => !source && onOpen(n.id)}>
              <title>{`${n.label}${inCycle.has(n.id) ? ' (in a cycle)' : ''}`}</title>
              <rect width={W} height={H} rx={source ? 22 : 6} fill={source ? '#fef7e0' : '#eef3fd'} stroke={inCycle.has(n.id) ? '#a50e0e' : '#3d4450'} />
              <text x={10} y={28} font-size="13" fill="#1b1f24">
                {n.label.length > 24 ? `${n.label.slice(0, 23)}…` : n.label}
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
        Arrows run from cause to effect; solid: caused by, dashed: read or decided on. Red: a cycle. {graph.dangling.length > 0 ? `${graph.dangling.length} reference(s) name no event of the trace.` : ''}
      </figcaption>
    </figure>
  );
}
