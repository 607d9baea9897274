/** @module Human-readable replay output: aligned sections, coloured when the stream is a terminal. */
import { styleText } from "node:util";
import type { ReplayReport } from "./replay-fixture.js";

export type Paint = (style: Parameters<typeof styleText>[0], text: string) => string;

export function painter(enabled: boolean): Paint {
  return enabled ? (style, text) => styleText(style, text) : (_style, text) => text;
}

/** Colour only for a terminal, and never when NO_COLOR is set. */
export function wantsColour(stream: { isTTY?: boolean }): boolean {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR;
}

const LABEL_WIDTH = 12;
const label = (text: string) => `  ${text.padEnd(LABEL_WIDTH)}`;

function indentBlock(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line, i) => (i === 0 ? line : prefix + line))
    .join("\n");
}

function statusStyle(status: number): Parameters<typeof styleText>[0] {
  if (status >= 500) return "red";
  if (status >= 400) return "yellow";
  return "green";
}

export function formatReport(report: ReplayReport, paint: Paint): string {
  const lines: string[] = [];
  const pad = " ".repeat(LABEL_WIDTH + 2);
  lines.push(`${paint("bold", report.name)} ${paint("dim", report.file)}`);
  lines.push(`${label("request")}${report.request.method} ${report.request.path}`);
  lines.push(`${label("status")}${paint(statusStyle(report.status), String(report.status))}`);
  if (report.candidates.length > 0) {
    lines.push(label("mappings"));
    for (const candidate of report.candidates) {
      const mark = candidate.matched ? paint("green", "✓") : paint("dim", "·");
      lines.push(`${pad}${mark} ${candidate.id.padEnd(20)} ${paint("dim", candidate.reason)}`);
    }
  }
  if (report.mappingId) lines.push(`${label("matched")}${paint("cyan", report.mappingId)}`);
  report.rendered.forEach((fields, index) => {
    const entries = Object.entries(fields);
    if (entries.length === 0) return;
    lines.push(label(report.rendered.length > 1 ? `rendered #${index + 1}` : "rendered"));
    for (const [field, value] of entries) {
      lines.push(
        `${pad}${field.padEnd(16)} ${indentBlock(JSON.stringify(value ?? ""), `${pad}${" ".repeat(17)}`)}`,
      );
    }
  });
  report.transformOutput.forEach((output, index) => {
    const title = report.transformOutput.length > 1 ? `transform #${index + 1}` : "transform";
    lines.push(
      `${label(title)}${output === undefined ? "undefined (templated action kept)" : output === null ? "null (skipped)" : JSON.stringify(output)}`,
    );
  });
  for (const action of report.actions) lines.push(`${label("action")}${JSON.stringify(action)}`);
  for (const planned of report.events) {
    lines.push(`${label("event")}${paint("magenta", planned.event)}`);
    const payload = planned.payload as Record<string, unknown>;
    for (const [key, value] of Object.entries(payload)) {
      if (key === "source") continue;
      const text = typeof value === "string" ? value : JSON.stringify(value);
      lines.push(`${pad}  ${key.padEnd(15)}${indentBlock(text, `${pad}  ${" ".repeat(15)}`)}`);
    }
  }
  if (report.body !== undefined) lines.push(`${label("response")}${JSON.stringify(report.body)}`);
  for (const log of report.logs.filter((l) => l.level === "warn" || l.level === "error")) {
    lines.push(`${label(log.level)}${paint(log.level === "error" ? "red" : "yellow", log.message)}`);
  }
  return lines.join("\n");
}
