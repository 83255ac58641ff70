/**
 * The spellings of the key header both the REST and the stream checks try (spec: Authentication,
 * "X-API-Key (also X-API-KEY)"; header names are case-insensitive in HTTP).
 */
import { API_KEY_HEADER } from '../src/spec.ts';

/** Header spellings the spec names (and HTTP's case-insensitivity implies); `catches`: the faults refusing one. */
export const HEADER_CASES = [
  { id: 'canonical', header: API_KEY_HEADER, catches: ['auth-canonical-header-refused'] },
  { id: 'upper', header: 'X-API-KEY', catches: ['auth-header-case-sensitive'] },
  { id: 'lower', header: 'x-api-key', catches: ['auth-header-case-sensitive'] },
] as const;
