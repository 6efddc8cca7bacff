// Analytics over a chosen range, per hour or day: comments and replies, reactions by kind (on comments,
// and page reactions on discussions themselves), active readers, moderation actions, webhook deliveries ok/failed — drawn with Chart.js, each chart with a
// text summary and the numbers in a table for people who do not see the canvas.
import { useEffect, useRef, useState } from "preact/hooks";
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from "chart.js";
import { gql } from "../api";
import { AnalyticsDocument, type AnalyticsQuery } from "../gql/graphql";
import { ErrorMessage, useLoad } from "../ui";
import { plural } from "../comments";

Chart.register(LineController, LineElement, PointElement, BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

const COLORS = ["#1d4ed8", "#b45309", "#047857", "#b91c1c", "#6d28d9", "#0e7490", "#be185d", "#4d7c0f"];
const day = (d: Date) => d.toISOString().slice(0, 10);

function ChartBox({ title, config, summary }: { title: string; config: ChartConfiguration; summary: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      ...config,
      options: { responsive: true, maintainAspectRatio: false, animation: false, ...config.options },
    });
    return () => chart.destroy();
  }, [config]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div class="canvas-box">
        <canvas ref={canvas} role="img" aria-label={`${title}: ${summary}`} />
      </div>
    </figure>
  );
}

type Data = AnalyticsQuery["analytics"];
const byKindOf = (counts: unknown) => (counts ?? {}) as Record<string, number>;

function charts(a: Data) {
  const labels = a.buckets.map((b) =>
    a.interval === "hour"
      ? new Date(b.start).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit" })
      : b.start.slice(0, 10),
  );
  const byKind = byKindOf;
  const kinds = [...new Set(a.buckets.flatMap((b) => Object.keys(byKind(b.reactions))))].sort();
  const pageKinds = [...new Set(a.buckets.flatMap((b) => Object.keys(byKind(b.pageReactions))))].sort();
  const line = (label: string, values: number[], i: number) => ({
    label,
    data: values,
    borderColor: COLORS[i],
    backgroundColor: COLORS[i],
    tension: 0.2,
  });
  const t = a.totals;
  return [
    {
      title: "Comments and replies",
      summary: `${t.comments} comments, ${t.replies} of them replies`,
      config: {
        type: "line",
        data: {
          labels,
          datasets: [
            line(
              "Comments",
              a.buckets.map((b) => b.comments),
              0,
            ),
            line(
              "Replies",
              a.buckets.map((b) => b.replies),
              1,
            ),
          ],
        },
      },
    },
    {
      title: "Reactions by kind",
      summary: kinds.length
        ? kinds.map((k) => `${((t.reactions ?? {}) as Record<string, number>)[k] ?? 0} ${k}`).join(", ")
        : "no reactions",
      config: {
        type: "bar",
        data: {
          labels,
          datasets: kinds.map((k, i) => ({
            label: k,
            data: a.buckets.map((b) => ((b.reactions ?? {}) as Record<string, number>)[k] ?? 0),
            backgroundColor: COLORS[i % COLORS.length],
          })),
        },
        options: { scales: { x: { stacked: true }, y: { stacked: true } } },
      },
    },
    {
      title: "Page reactions by kind",
      summary: pageKinds.length ? pageKinds.map((k) => `${byKind(t.pageReactions)[k] ?? 0} ${k}`).join(", ") : "no page reactions",
      config: {
        type: "bar",
        data: {
          labels,
          datasets: pageKinds.map((k, i) => ({
            label: k,
            data: a.buckets.map((b) => byKind(b.pageReactions)[k] ?? 0),
            backgroundColor: COLORS[(i + 5) % COLORS.length],
          })),
        },
        options: { scales: { x: { stacked: true }, y: { stacked: true } } },
      },
    },
    {
      title: "Active readers",
      summary: `${t.activeReaders} distinct readers over the range`,
      config: {
        type: "line",
        data: {
          labels,
          datasets: [
            line(
              "Active readers",
              a.buckets.map((b) => b.activeReaders),
              2,
            ),
          ],
        },
      },
    },
    {
      title: "New followers",
      summary: `${plural(a.followers, "reader follows", "readers follow")} now, ${t.newFollowers} of them since the range began`,
      config: {
        type: "bar",
        data: {
          labels,
          datasets: [{ label: "New followers", data: a.buckets.map((b) => b.newFollowers), backgroundColor: COLORS[6] }],
        },
      },
    },
    {
      title: "Moderation actions",
      summary: `${t.moderationActions} actions`,
      config: {
        type: "bar",
        data: {
          labels,
          datasets: [{ label: "Moderation actions", data: a.buckets.map((b) => b.moderationActions), backgroundColor: COLORS[4] }],
        },
      },
    },
    {
      title: "Webhook deliveries",
      summary: `${t.webhookDeliveries.ok} delivered, ${t.webhookDeliveries.failed} failed`,
      config: {
        type: "bar",
        data: {
          labels,
          datasets: [
            { label: "Delivered", data: a.buckets.map((b) => b.webhookDeliveries.ok), backgroundColor: COLORS[2] },
            { label: "Failed", data: a.buckets.map((b) => b.webhookDeliveries.failed), backgroundColor: COLORS[3] },
          ],
        },
        options: { scales: { x: { stacked: true }, y: { stacked: true } } },
      },
    },
  ] as { title: string; summary: string; config: ChartConfiguration }[];
}

export function AnalyticsScreen() {
  const now = new Date();
  const [range, setRange] = useState({
    from: day(new Date(now.getTime() - 13 * 86_400_000)),
    to: day(new Date(now.getTime() + 86_400_000)),
    interval: "day" as "day" | "hour",
  });
  const data = useLoad(
    () => gql(AnalyticsDocument, { from: `${range.from}T00:00:00.000Z`, to: `${range.to}T00:00:00.000Z`, interval: range.interval }),
    [range.from, range.to, range.interval],
  );
  const a = data.data?.analytics;
  const [built, setBuilt] = useState<ReturnType<typeof charts>>([]);
  useEffect(() => setBuilt(a ? charts(a) : []), [a]);
  return (
    <section aria-labelledby="analytics-title">
      <h1 id="analytics-title">Analytics</h1>
      <form
        class="toolbar"
        aria-label="Range"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          setRange({ from: String(f.get("from")), to: String(f.get("to")), interval: String(f.get("interval")) as "day" | "hour" });
        }}
      >
        <label>
          From
          <input name="from" type="date" defaultValue={range.from} required />
        </label>
        <label>
          To
          <input name="to" type="date" defaultValue={range.to} required />
        </label>
        <label>
          Per
          <select name="interval" defaultValue={range.interval}>
            <option value="day">day</option>
            <option value="hour">hour</option>
          </select>
        </label>
        <button type="submit">Show</button>
      </form>
      <ErrorMessage error={data.error} />
      <div class="charts">
        {built.map((c) => (
          <ChartBox key={c.title} title={c.title} summary={c.summary} config={c.config} />
        ))}
      </div>
      {a && (
        <details>
          <summary>The numbers</summary>
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Scrollable table">
            <table>
              <thead>
                <tr>
                  <th scope="col">From</th>
                  <th scope="col">Comments</th>
                  <th scope="col">Replies</th>
                  <th scope="col">Reactions</th>
                  <th scope="col">Page reactions</th>
                  <th scope="col">Active readers</th>
                  <th scope="col">New followers</th>
                  <th scope="col">Moderation</th>
                  <th scope="col">Deliveries ok / failed</th>
                </tr>
              </thead>
              <tbody>
                {a.buckets.map((b) => (
                  <tr key={b.start}>
                    <td>{b.start.slice(0, a.interval === "hour" ? 16 : 10).replace("T", " ")}</td>
                    <td>{b.comments}</td>
                    <td>{b.replies}</td>
                    <td>{Object.values((b.reactions ?? {}) as Record<string, number>).reduce((x, y) => x + y, 0)}</td>
                    <td>{Object.values(byKindOf(b.pageReactions)).reduce((x, y) => x + y, 0)}</td>
                    <td>{b.activeReaders}</td>
                    <td>{b.newFollowers}</td>
                    <td>{b.moderationActions}</td>
                    <td>
                      {b.webhookDeliveries.ok} / {b.webhookDeliveries.failed}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      )}
    </section>
  );
}
