/** @module What each client address (an IPv6 /64) holds of the gateway's connections, kept as they open, take requests and close; the caps decide on it. */
import type { Socket } from "node:net";

/** One address's tally. */
export interface Held {
  connections: number;
  /** Its connections that wait for a request's headers, longest-waiting first. */
  readonly waiting: Set<Socket>;
  /** Its connections whose current request is still arriving (headers or body). */
  pending: number;
}

/** A connection's own state. */
export interface ConnectionState {
  readonly socket: Socket;
  /** Its address's tally; none for a peer the per-address caps do not apply to. */
  readonly held: Held | undefined;
  readonly address: string;
  /** Its current request is still arriving (headers or body). */
  pending: boolean;
  /** Requests received on it and not yet answered; while none, it waits for a request's headers. */
  requests: number;
  /** Counted: false once it closed, or was cut to make room. */
  open: boolean;
}

/**
 * A connection is pending from its arrival until its first request's body has arrived (or its answer left), and
 * again from each later request's headers. It waits (for a request's headers) from its arrival until its first
 * request's headers are in, and again once its requests are all answered: an idle kept-alive connection waits too.
 */
export class ConnectionTally {
  private readonly held = new Map<string, Held>();
  private readonly states = new WeakMap<Socket, ConnectionState>();
  /** Connections counted now, exempt peers' included. */
  open = 0;

  get addresses(): number {
    return this.held.size;
  }

  of(address: string): Held | undefined {
    return this.held.get(address);
  }

  stateOf(socket: Socket): ConnectionState | undefined {
    return this.states.get(socket);
  }

  /** Counts `socket` until it closes; `address` undefined: an exempt peer, counted only in `open`. */
  admit(socket: Socket, address: string | undefined): void {
    this.open++;
    let held: Held | undefined;
    if (address !== undefined) {
      held = this.held.get(address);
      if (held === undefined) {
        held = { connections: 0, pending: 0, waiting: new Set() };
        this.held.set(address, held);
      }
      held.connections++;
      held.pending++;
      held.waiting.add(socket);
    }
    const state: ConnectionState = {
      socket,
      held,
      address: address ?? "",
      pending: true,
      requests: 0,
      open: true,
    };
    this.states.set(socket, state);
    socket.once("close", () => this.release(state));
  }

  /**
   * Cuts the connection that gives way to a newcomer of an address holding `holds`: the longest-waiting one of the
   * address with the most waiting among those holding at least two more. False when there is none. Found by a look
   * at every address, only when the gateway is full: a request pays two Set operations, not an index kept in order.
   */
  makeRoom(holds: number): boolean {
    let busiest: Held | undefined;
    for (const held of this.held.values()) {
      if (held.connections < holds + 2 || held.waiting.size === 0) continue;
      if (busiest === undefined || held.waiting.size > busiest.waiting.size) busiest = held;
    }
    if (busiest === undefined) return false;
    const socket: Socket = busiest.waiting.values().next().value!;
    // node:http counts it gone as it is destroyed; its close comes later.
    this.release(this.states.get(socket)!);
    socket.destroy();
    return true;
  }

  /** A request's headers arrived on a counted connection: it is pending (again), and no longer waits. */
  requested(state: ConnectionState, held: Held): void {
    if (!state.pending) {
      state.pending = true;
      held.pending++;
    }
    if (state.requests++ === 0) held.waiting.delete(state.socket);
  }

  /** Its request's body has arrived, or its answer has gone. */
  settle(state: ConnectionState): void {
    if (!state.pending) return;
    state.pending = false;
    if (state.held) state.held.pending--;
  }

  /** A request was answered: with none left, the connection waits for the next one's headers. */
  answered(state: ConnectionState): void {
    state.requests--;
    if (state.requests === 0 && state.open && state.held && !state.socket.destroyed) {
      state.held.waiting.add(state.socket);
    }
  }

  /** Idempotent: on close, or at once when the connection is cut to make room. */
  private release(state: ConnectionState): void {
    if (!state.open) return;
    state.open = false;
    this.open--;
    this.settle(state);
    const held = state.held;
    if (held === undefined) return;
    held.waiting.delete(state.socket);
    held.connections--;
    if (held.connections === 0) this.held.delete(state.address);
  }
}
