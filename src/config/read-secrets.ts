/** @module Reads each secret field's `{ file }` or `{ env }` into its text, where the schema says a secret stands; never quotes a value. */
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import type * as v from "valibot";
import { type ConfigIssue, joinPath } from "./issues.js";
import { isPlainObject } from "./plain-object.js";
import { ENV_NAME, SECRET_READ } from "./secret-schema.js";

export interface SecretContext {
  /** What a relative `{ file }` path is relative to: the config file's directory. */
  configDir: string;
  env: NodeJS.ProcessEnv;
}

/** The parts of a valibot schema the walk reads; every schema is one of these shapes or has none of them. */
interface SchemaNode {
  type: string;
  kind: string;
  pipe?: readonly unknown[];
  wrapped?: SchemaNode;
  entries?: Record<string, SchemaNode>;
  item?: SchemaNode;
  key?: string;
  options?: readonly SchemaNode[];
  literal?: unknown;
}

/** A field `secretField` made: its pipe (or the pipe of the schema a description was piped onto) ends in SECRET_READ. */
function isSecret(node: SchemaNode): boolean {
  return (
    node.pipe?.some(
      (item) =>
        item === SECRET_READ ||
        (item !== node && (item as SchemaNode).kind === "schema" && isSecret(item as SchemaNode)),
    ) ?? false
  );
}

/** Others may read or write it: the permission bits of "others" (the group's are allowed, to share with a service). */
const OTHERS = 0o006;

/** The path as a shell reads it, for the `chmod` line of a hint. */
function shellPath(file: string): string {
  return /^[\w./@%+=:,-]+$/.test(file) ? file : `'${file.replaceAll("'", "'\\''")}'`;
}

/** A token, a signing secret or a URL with a password fits in far less; a larger file is a wrong path. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

function readFileSecret(file: string, at: string, issues: ConfigIssue[]): string | undefined {
  const problem = (message: string, hint?: string) => {
    issues.push({ path: at, message, ...(hint !== undefined && { hint }) });
    return undefined;
  };
  let fd: number | undefined;
  try {
    // Opened once, then judged and read through the same descriptor: the file checked is the file read. Non-blocking,
    // so a FIFO named by mistake is refused below instead of hanging the load.
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    const stat = fstatSync(fd);
    if (stat.isDirectory()) return problem(`${file} is a directory: name the file that holds the secret`);
    if (!stat.isFile()) return problem(`${file} is not a regular file: name the file that holds the secret`);
    if (stat.size > MAX_SECRET_FILE_BYTES) {
      return problem(`${file} is larger than ${MAX_SECRET_FILE_BYTES} bytes: it does not look like a secret`);
    }
    // Windows has no such bits: Node reports every file there as readable by all.
    if (process.platform !== "win32" && (stat.mode & OTHERS) !== 0) {
      return problem(
        `${file} may be read or written by other users, so the secret in it is not kept`,
        `chmod 600 ${shellPath(file)}, or 640 to share it with the file's group`,
      );
    }
    const text = readFileSync(fd, "utf8").trim();
    return text === "" ? problem(`${file} is empty`) : text;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return problem(`${file} does not exist`);
    if (code === "EACCES") return problem(`${file} cannot be read by this user (permission denied)`);
    if (code === "EISDIR") return problem(`${file} is a directory: name the file that holds the secret`);
    return problem(`cannot read ${file} (${code ?? (error as Error).message})`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function readEnvSecret(name: string, at: string, env: NodeJS.ProcessEnv, issues: ConfigIssue[]) {
  const value = env[name];
  if (value === undefined || value === "") {
    issues.push({
      path: at,
      message: `environment variable ${name} is ${value === undefined ? "not set" : "empty"}`,
      variable: name,
    });
    return undefined;
  }
  return value;
}

/**
 * Reads one secret field: text stays as it is, `{ file }` and `{ env }` become their text. A value of another
 * shape, or one that cannot be read, stays as it is: the schema refuses its shape, or the issue says why.
 */
function readSecret(value: unknown, at: string, context: SecretContext, issues: ConfigIssue[]): unknown {
  if (!isPlainObject(value)) return value;
  const keys = Object.keys(value);
  if (keys.length !== 1) return value;
  if (typeof value.file === "string" && value.file !== "") {
    return readFileSecret(path.resolve(context.configDir, value.file), at, issues) ?? value;
  }
  if (typeof value.env === "string" && ENV_NAME.test(value.env)) {
    return readEnvSecret(value.env, at, context.env, issues) ?? value;
  }
  return value;
}

/**
 * A copy of `raw` where every secret field of `schema` that names a file or a variable holds its text, read now
 * (each load reads again), with an issue for each that cannot be read: its path, and the file or the variable.
 */
export function readSecrets(
  schema: v.GenericSchema,
  raw: unknown,
  context: SecretContext,
): { value: unknown; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const walk = (node: SchemaNode, value: unknown, at: string): unknown => {
    if (value === undefined) return value;
    if (isSecret(node)) return readSecret(value, at, context, issues);
    if (node.wrapped) return walk(node.wrapped, value, at);
    if (node.entries && isPlainObject(value)) {
      const copy: Record<string, unknown> = { ...value };
      for (const [key, entry] of Object.entries(node.entries)) {
        if (key in value) copy[key] = walk(entry, value[key], joinPath(at, key));
      }
      return copy;
    }
    if (node.item && Array.isArray(value))
      return value.map((item, i) => walk(node.item!, item, joinPath(at, i)));
    if (node.type === "variant" && node.key !== undefined && isPlainObject(value)) {
      const option = node.options?.find((o) => o.entries?.[node.key!]?.literal === value[node.key!]);
      return option ? walk(option, value, at) : value;
    }
    return value;
  };
  return { value: walk(schema as unknown as SchemaNode, raw, ""), issues };
}
