/** @module Generates the JSON Schemas of `schemas/` and the manifest's configSchema from the valibot schemas. */
import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { AgentBodySchema, HookActionOverrideSchema, WakeBodySchema } from "../actions/action-schemas.js";
import { MappingSchema } from "../config/mapping-schema.js";
import { HooksConfigSchema, PluginGatewayConfigSchema } from "../config/schema.js";
import { HOOK_EVENT_SCHEMAS } from "../events.js";
import { GatewayConfigSchema } from "../gateway/gateway-config.js";
import { INSPECTOR_TOOL_NAMES } from "../openclaw/inspector-tool-params.js";
import { FixtureSchema } from "../replay/fixture-schema.js";

const SCHEMA_BASE = "https://hooks-intake.local/schemas/";

/** The JSON Schema of a valibot schema, descriptions and defaults included. */
export function jsonSchemaOf(schema: v.GenericSchema): Record<string, unknown> {
  // Transformations (trim, floor) have no JSON Schema form; the validation rules around them still carry over.
  return toJsonSchema(schema, { errorMode: "ignore" }) as Record<string, unknown>;
}

function generate(schema: v.GenericSchema, file: string, title: string): Record<string, unknown> {
  return { $id: `${SCHEMA_BASE}${file}`, title, ...jsonSchemaOf(schema) };
}

/** File name under `schemas/` → schema. Extra generators (fixtures, gateway) are appended by their owners. */
export function generateSchemas(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {
    "hooks-config.schema.json": generate(HooksConfigSchema, "hooks-config.schema.json", "hooks config block"),
    "plugin-config.schema.json": generate(
      PluginGatewayConfigSchema,
      "plugin-config.schema.json",
      "gateway config as read by the hooks plugin",
    ),
    "wake-body.schema.json": generate(WakeBodySchema, "wake-body.schema.json", "POST <hooks.path>/wake body"),
    "agent-body.schema.json": generate(
      AgentBodySchema,
      "agent-body.schema.json",
      "POST <hooks.path>/agent body",
    ),
    "mapping.schema.json": generate(MappingSchema, "mapping.schema.json", "hooks.mappings[] entry"),
    "transform-result.schema.json": generate(
      HookActionOverrideSchema,
      "transform-result.schema.json",
      "what a transform may return",
    ),
    "fixture.schema.json": generate(
      FixtureSchema,
      "fixture.schema.json",
      "fixture file for hooks replay / hooks test",
    ),
    "gateway-config.schema.json": generate(
      GatewayConfigSchema,
      "gateway-config.schema.json",
      "config file of the reference gateway (hooks serve)",
    ),
  };
  for (const [event, schema] of Object.entries(HOOK_EVENT_SCHEMAS)) {
    const file = `events/${event.replace(":", ".")}.schema.json`;
    out[file] = generate(schema, file, `payload of bus event ${event}`);
  }
  return out;
}

interface PackageFacts {
  name: string;
  version: string;
  description: string;
}

const hooksConfigSchema = () => generate(HooksConfigSchema, "hooks-config.schema.json", "hooks config block");

/** The manifest, with the generated config schema in it. */
export function generateManifest(pkg: PackageFacts): Record<string, unknown> {
  return {
    id: "hooks",
    name: "Webhook intake",
    version: pkg.version,
    description: pkg.description,
    entry: "./dist/index.js",
    configSchema: hooksConfigSchema(),
  };
}

/**
 * OpenClaw's manifest (`openclaw.plugin.json`), read before any plugin code runs: it validates
 * `plugins.entries["hooks-intake"].config` against the same generated schema, and the hints tell its config
 * surfaces which fields are secrets. OpenClaw offers a plugin's tools only when the manifest declares them.
 */
export function generateOpenClawManifest(pkg: PackageFacts): Record<string, unknown> {
  return {
    id: "hooks-intake",
    name: "Webhook intake",
    version: pkg.version,
    description: pkg.description,
    activation: { onStartup: true },
    configSchema: hooksConfigSchema(),
    uiHints: {
      token: { label: "Hook token", help: "Dedicated bearer token for senders", sensitive: true },
      path: { label: "Path", help: 'Base path of the intake, e.g. "/intake"' },
    },
    contracts: { tools: Object.values(INSPECTOR_TOOL_NAMES) },
  };
}
