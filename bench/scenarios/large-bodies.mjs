/** @module Scenario: 50 concurrent requests declaring 1 GiB bodies must all get 413 without the gateway's memory growing. */
import { connect } from "node:net";
import { HOOKS_PATH, jsonRequest, WAKE_BODY } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { measure } from "../lib/load.mjs";
import { readRss, sleep } from "../lib/processes.mjs";
import { valueRow } from "../lib/report.mjs";

const SOCKETS = 50;
const ROUNDS = 3;
const DECLARED = 1_073_741_824;
/**
 * Body bytes sent after the headers, then nothing more: a client that kept writing into a refused connection
 * would get EPIPE before reading the 413 that is already on its way.
 */
const SENT_BODY = Buffer.alloc(256 * 1024, 0x61);
const ROUND_TIMEOUT_MS = 10_000;
const MIB = 1024 * 1024;
const RSS_LIMIT_MIB = 32;

/** One raw request: headers with Content-Length 1 GiB and the first 256 KiB of the body, then wait for the answer. */
function hugeRequest(url, token) {
  return new Promise((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port) });
    let response = "";
    let status;
    const finish = (outcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, outcome });
    };
    const timer = setTimeout(() => finish("timeout"), ROUND_TIMEOUT_MS);
    socket.on("connect", () => {
      socket.write(
        `POST ${HOOKS_PATH}/wake HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${DECLARED}\r\n\r\n`,
      );
      socket.write(SENT_BODY);
    });
    socket.on("data", (chunk) => {
      response += chunk.toString("latin1");
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(response);
      if (match && status === undefined) {
        status = Number(match[1]);
        finish("answered");
      }
    });
    socket.on("error", () => finish(status === undefined ? "error" : "answered"));
    socket.on("close", () => finish(status === undefined ? "closed" : "answered"));
  });
}

export const scenario = {
  id: "large-bodies",
  title: "50 x 1 GiB declared bodies",
  async run(context) {
    const gateway = await context.startGateway({ label: "gateway (large bodies)" });
    try {
      // Warm the request path first, so the RSS before is that of a gateway that has served traffic.
      await measure(gateway, jsonRequest(context.token, "wake", WAKE_BODY), 1);
      await sleep(500);
      const before = readRss(gateway.pid);
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, readRss(gateway.pid) ?? 0);
      }, 10);
      const statuses = {};
      const rounds = [];
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const results = await Promise.all(
            Array.from({ length: SOCKETS }, () => hugeRequest(gateway.url, context.token)),
          );
          for (const result of results) {
            const key = result.status ?? result.outcome;
            statuses[key] = (statuses[key] ?? 0) + 1;
          }
          rounds.push({ rssMiB: Math.round(((readRss(gateway.pid) ?? 0) / MIB) * 10) / 10 });
        }
        await sleep(500);
      } finally {
        clearInterval(sampler);
      }
      const after = readRss(gateway.pid);
      const growthPeak = (peak - before) / MIB;
      const growthAfter = (after - before) / MIB;
      const all413 = statuses[413] === SOCKETS * ROUNDS;
      context.log(
        `  statuses ${JSON.stringify(statuses)}, rounds ${JSON.stringify(rounds)}, RSS ${(before / MIB).toFixed(1)} → peak ${(peak / MIB).toFixed(1)} → after ${(after / MIB).toFixed(1)} MiB`,
      );
      return [
        valueRow({
          id: "large-bodies",
          title: `${SOCKETS} concurrent 1 GiB declared bodies (x${ROUNDS} rounds): RSS growth`,
          value: growthPeak,
          unit: "MiB",
          target: { op: "<", value: RSS_LIMIT_MIB },
          pass: all413 && growthPeak < RSS_LIMIT_MIB,
          detail: `all 413: ${all413} (${JSON.stringify(statuses)}); RSS before ${(before / MIB).toFixed(1)} MiB, peak +${growthPeak.toFixed(1)}, after +${growthAfter.toFixed(1)} MiB`,
          statuses,
          rssBeforeMiB: Math.round((before / MIB) * 10) / 10,
          rssGrowthPeakMiB: Math.round(growthPeak * 10) / 10,
          rssGrowthAfterMiB: Math.round(growthAfter * 10) / 10,
          rounds,
        }),
      ];
    } finally {
      await gateway.stop();
    }
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);
