/** Faults of the API key (the header, a missing, invalid or suspended key) and of its entitlements. */
import { ASSET_TYPE, STATUS } from '../../src/spec.ts';
import { keyHeader } from '../key-header.ts';
import { f, type Fault } from './record.ts';
import { keyOfSpelling } from './support.ts';

/** The faults of the API key (the header, a missing, invalid or suspended key) and of its entitlements. */
export const AUTH_FAULTS = [
  f(
    'auth-header-case-sensitive',
    'auth',
    'header names are case-insensitive: X-API-KEY and x-api-key are accepted',
    ['rule:auth:header'],
    {
      admission: { caller: (_key, { req, svc }) => keyOfSpelling(svc, req, true) },
    },
  ),
  f('auth-canonical-header-refused', 'auth', 'the key header is accepted as written, X-API-Key', ['rule:auth:header'], {
    admission: { caller: (key, { req, surface, svc }) => (surface === 'rest' ? keyOfSpelling(svc, req, false) : key) },
  }),
  f(
    'auth-missing-key-accepted',
    'auth',
    'a request without a valid key is rejected with HTTP 401 and 50005',
    ['rule:auth:rest-without-a-valid-key', 'status:50005'],
    {
      admission: {
        caller: (key, { req, surface, svc }) =>
          key ?? (surface === 'rest' && keyHeader(req) === undefined ? svc.primary : undefined),
      },
    },
  ),
  f(
    'auth-http-403',
    'auth',
    'a missing or invalid key gets HTTP 401 (not another status)',
    ['rule:auth:rest-without-a-valid-key'],
    {
      envelope: { write: (out, { status }) => (status === STATUS.UNAUTHORIZED ? { ...out, http: 403 } : out) },
    },
  ),
  f('auth-suspended-served', 'auth', 'a suspended key gets 50007', ['status:50007'], {
    admission: { account: (status) => (status === STATUS.SUSPENDED ? undefined : status) },
  }),
  // Entitlements
  f(
    'entitlement-asset-type-ignored',
    'entitlements',
    'a key limited to asset types cannot read others (50109)',
    ['rule:auth:entitlements', 'status:50109', 'notice:50109'],
    {
      // The asset type is not looked at; the whitelist still is.
      entitlement: (denied, { key, entry }) =>
        denied !== STATUS.ASSET_TYPE_DENIED
          ? denied
          : key.pairs && !key.pairs.includes(entry!.code)
            ? STATUS.ACCESS_DENIED
            : undefined,
    },
    {
      // With one documented denial for every refused pair, the profile's probe of that status is
      // the asset-type-limited key asking for another type.
      widenedBy: (d) =>
        d.rest.denial === 'by-cause' || d.rest.denial === STATUS.ASSET_TYPE_DENIED
          ? undefined
          : `the probe of ${d.rest.denial} asks for a pair of an asset type the key may not read`,
    },
  ),
  f(
    'entitlement-pairs-list-unfiltered',
    'entitlements',
    'the pairs a key reads depend on the key: /v1/pairs lists only its pairs',
    ['rule:auth:entitlements'],
    { entitlement: (denied, { use }) => (use === 'list' ? undefined : denied) },
  ),
  f(
    'entitlement-whitelist-subscribe',
    'entitlements',
    'subscribing outside the whitelist gives 50010',
    ['rule:auth:after-connection', 'notice:50010'],
    {
      entitlement: (denied, { use }) => (use === 'subscribe' && denied === STATUS.ACCESS_DENIED ? undefined : denied),
    },
  ),
  f(
    'entitlement-asset-type-partial',
    'entitlements',
    'a key limited to asset types is denied every other asset type (here Metal is served on REST and the stream)',
    ['rule:auth:entitlements'],
    {
      // Metal is served to a key limited to other asset types, on REST and the stream; the listing stays filtered.
      entitlement: (denied, { entry, use }) =>
        use !== 'list' && denied === STATUS.ASSET_TYPE_DENIED && entry?.assetType === ASSET_TYPE.metal
          ? undefined
          : denied,
    },
  ),
  f(
    'entitlement-whitelist-price-ignored',
    'entitlements',
    "REST /v1/price refuses a pair outside the key's whitelist with 50010",
    ['rule:auth:entitlements', 'status:50010'],
    {
      entitlement: (denied, { use }) => (use === 'price' && denied === STATUS.ACCESS_DENIED ? undefined : denied),
    },
    {
      // With one documented denial for every refused pair, the profile's probe of that status is
      // the whitelisted key asking for a pair outside its whitelist.
      widenedBy: (d) =>
        d.rest.denial === 'by-cause'
          ? undefined
          : `the probe of ${d.rest.denial} asks for a pair outside the whitelist`,
    },
  ),
  f(
    'entitlement-whitelist-unlisted',
    'entitlements',
    "the pairs a key may read are listed for it (here a whitelisted key's /v1/pairs lists none of its " +
      'pairs, which /v1/price still serves)',
    ['rule:auth:entitlements'],
    {
      entitlement: (denied, { key, entry, use }) =>
        use === 'list' && entry !== undefined && key.pairs !== undefined && key.pairs.length > 0
          ? (denied ?? STATUS.ACCESS_DENIED)
          : denied,
    },
  ),
] as const satisfies readonly Fault[];
