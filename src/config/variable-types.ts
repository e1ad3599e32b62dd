/**
 * The type a configuration variable takes: an environment variable is text, and a value that is
 * exactly one variable becomes the number or boolean its field takes (`port: ${PORT}`), found by
 * walking the schema to the field. A field that takes text keeps it as text, so that an admin
 * token or an API key made of digits is not turned into a number (losing its leading zeros, or
 * its last digits to floating point). Only whole numbers and decimals, `true` and `false` are
 * converted, as before: nothing else in the file is coerced.
 */
import type { TSchema } from '@sinclair/typebox';
import type { Segment, VariableTyper } from './interpolate.js';

const NUMBER = /^-?\d+(\.\d+)?$/;

type Node = TSchema & {
  type?: string | string[];
  anyOf?: Node[];
  oneOf?: Node[];
  allOf?: Node[];
  properties?: Record<string, Node>;
  patternProperties?: Record<string, Node>;
  additionalProperties?: Node | boolean;
  items?: Node;
};

/** The schemas a value at `path` may be checked against (every branch of a union). */
function schemasAt(schema: Node, path: readonly Segment[]): Node[] {
  let nodes = flatten(schema);
  for (const segment of path) {
    nodes = nodes.flatMap((node) => {
      if (typeof segment === 'number') return node.items === undefined ? [] : flatten(node.items);
      const property = node.properties?.[segment];
      if (property !== undefined) return flatten(property);
      const pattern = Object.entries(node.patternProperties ?? {}).find(([source]) => new RegExp(source).test(segment))?.[1];
      if (pattern !== undefined) return flatten(pattern);
      return typeof node.additionalProperties === 'object' ? flatten(node.additionalProperties) : [];
    });
  }
  return nodes;
}

function flatten(node: Node): Node[] {
  const branches = [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])];
  return branches.length === 0 ? [node] : branches.flatMap(flatten);
}

function takes(nodes: readonly Node[], type: string): boolean {
  return nodes.some((node) => (Array.isArray(node.type) ? node.type.includes(type) : node.type === type));
}

export function variableTyper(schema: TSchema): VariableTyper {
  return (path, text) => {
    const nodes = schemasAt(schema, path);
    if (takes(nodes, 'string')) return text;
    if ((takes(nodes, 'number') || takes(nodes, 'integer')) && NUMBER.test(text)) return Number(text);
    if (takes(nodes, 'boolean') && (text === 'true' || text === 'false')) return text === 'true';
    return text;
  };
}
