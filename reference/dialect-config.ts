/**
 * The part of a dialect that is configuration rather than wire shape: each key's connection
 * allowance (null keeps the configured one). Applied over the resolved config, never mutating it.
 */
import type { KeyConfig, ReferenceConfig } from './config.ts';
import type { Dialect } from './dialect.ts';

/** The config with the dialect's allowances: primary, limited, and (when set) every other key that has one. */
export function applyDialect(config: ReferenceConfig, dialect: Readonly<Dialect>): ReferenceConfig {
  const { primary, limited, others } = dialect.keys;
  const keys: Record<string, KeyConfig> = {};
  for (const [name, k] of Object.entries(config.keys)) {
    const chosen = name === 'primary' ? primary : name === 'limited' ? limited : k.connections === undefined ? null : others;
    const connections = chosen ?? k.connections;
    keys[name] = connections === undefined ? k : { ...k, connections };
  }
  return { ...config, keys };
}
