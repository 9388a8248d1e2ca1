// The overview's time-series chart, drawn by uPlot (a small, well-kept canvas charting library),
// in its own lazily loaded chunk so the overview's first paint never waits for it. Events per day
// are bars, API requests per day a line; hovering a day shows both figures in the legend, and
// dragging across days zooms in (double-click zooms out). The figures are also in the wrapper's
// aria-label, for screen readers and for anyone who wants the numbers, not the picture.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Day {
  day: string;
  events_ingested: number;
  api_requests: number;
}

const HEIGHT = 180;

const DAY = 86_400;

/** Every day of the period, with zeros where nothing happened (the API lists only days with activity). */
function everyDay(from: string, to: string, days: Day[]): Day[] {
  const byDay = new Map(days.map((d) => [d.day, d]));
  const out: Day[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`) && out.length < 1000; t += DAY * 1000) {
    const day = new Date(t).toISOString().slice(0, 10);
    out.push(byDay.get(day) ?? { day, events_ingested: 0, api_requests: 0 });
  }
  return out;
}

/** Draws the period's chart into `el`, sized to its width, and keeps it sized; returns what removes it. */
export function dailyChart(el: HTMLElement, period: { from: string; to: string }, active: Day[]): () => void {
  const days = everyDay(period.from, period.to, active);
  const x = days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
  const width = () => Math.max(240, el.clientWidth);
  const chart = new uPlot(
    {
      width: width(),
      height: HEIGHT,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true, range: () => [(x[0] ?? 0) - DAY / 2, (x.at(-1) ?? 0) + DAY / 2] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [{}, { size: 56 }],
      series: [
        { label: 'Day (UTC)', value: (_u, v) => (v === null ? '–' : new Date(v * 1000).toISOString().slice(0, 10)) },
        { label: 'Events', stroke: '#0b57d0', fill: 'rgba(11,87,208,.55)', paths: uPlot.paths.bars!({ size: [0.7, 40] }), points: { show: false } },
        { label: 'API requests', stroke: '#7a4f01', width: 2 },
      ],
    },
    [x, days.map((d) => d.events_ingested), days.map((d) => d.api_requests)],
    el,
  );
  const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: HEIGHT }));
  resize.observe(el);
  return () => {
    resize.disconnect();
    chart.destroy();
  };
}
