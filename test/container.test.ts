/** @module The ports of an instance: one a host registered by token wins, then the options' own, else the default. */
import "reflect-metadata";
import { container as rootContainer } from "tsyringe";
import { describe, expect, it } from "vitest";
import { resolvePorts } from "../src/container.js";
import { createNullJournal } from "../src/journal/null-journal.js";
import { prepareHooks } from "../src/prepare-hooks.js";
import { MemoryStore } from "../src/store/memory.js";
import { PORTS } from "../src/tokens.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const prepared = prepareHooks(
  { hooks: { enabled: true, token: "container-test-token-0123456789", journal: { enabled: false } } },
  { configDir: "/etc/gateway" },
).prepared!;

describe("resolvePorts", () => {
  it("takes the ports a host registered by token, and makes a default for each it left out", () => {
    const hostContainer = rootContainer.createChildContainer();
    const clock = { now: () => 42 };
    const journal = createNullJournal();
    hostContainer.register(PORTS.clock, { useValue: clock });
    hostContainer.register(PORTS.journal, { useValue: journal });
    const ports = resolvePorts({
      prepared,
      logger: quiet,
      options: { container: hostContainer, metrics: false },
    });
    expect(ports.clock).toBe(clock);
    expect(ports.journal).toBe(journal);
    // The default store is built on the host's clock.
    expect(ports.store).toBeInstanceOf(MemoryStore);
    expect(ports.clock.now()).toBe(42);
  });

  it("gives each instance its own ports: two resolutions share no default", () => {
    const a = resolvePorts({ prepared, logger: quiet, options: { metrics: false } });
    const b = resolvePorts({ prepared, logger: quiet, options: { metrics: false } });
    expect(a.store).not.toBe(b.store);
    expect(a.journal).not.toBe(b.journal);
  });
});
