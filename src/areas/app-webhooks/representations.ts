// The response shapes of app webhooks: the hook's configuration (its secret masked) and the
// deliveries, listed and in detail.
import { Type, type Static } from 'typebox';
import { isoSeconds } from '../../platform/clock.ts';
import { wasDropped } from './engine.ts';
import type * as store from './store.ts';

export const SECRET_MASK = '********';

export const HookConfig = Type.Object({
  url: Type.String({ description: 'The delivery target; empty until one is set' }),
  content_type: Type.String({ description: '`json` or `form`' }),
  secret: Type.Optional(Type.String({ description: 'Masked as ******** when a secret is set' })),
  insecure_ssl: Type.String({ description: '`0` verifies the TLS certificate of the target, `1` does not' }),
});
export type HookConfig = Static<typeof HookConfig>;

const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);

export const DeliverySummary = Type.Object({
  id: Type.Integer(),
  guid: Type.String(),
  delivered_at: Type.String(),
  redelivery: Type.Boolean(),
  duration: Type.Number({ description: 'Seconds' }),
  status: Type.String(),
  status_code: Type.Integer(),
  event: Type.String(),
  action: NullableString,
  installation_id: NullableInteger,
  repository_id: NullableInteger,
  throttled_at: NullableString,
});
export type DeliverySummary = Static<typeof DeliverySummary>;

const HeaderMap = Type.Record(Type.String(), Type.String());

export const DeliveryDetail = Type.Object({
  ...DeliverySummary.properties,
  url: Type.String(),
  request: Type.Object({ headers: HeaderMap, payload: Type.Record(Type.String(), Type.Unknown()) }),
  response: Type.Object({ headers: HeaderMap, payload: NullableString }),
});
export type DeliveryDetail = Static<typeof DeliveryDetail>;

export function deliverySummaryBody(row: store.DeliverySummaryRow): DeliverySummary {
  return {
    id: row.id,
    guid: row.guid,
    delivered_at: isoSeconds(row.delivered_at!),
    redelivery: Boolean(row.redelivery),
    duration: Number(row.duration),
    status: row.status!,
    status_code: row.status_code!,
    event: row.event,
    action: row.action,
    installation_id: row.installation_id,
    repository_id: row.repository_id,
    throttled_at: row.throttled_at ? isoSeconds(row.throttled_at) : null,
  };
}

export function hookConfigBody(hook: store.HookRow): HookConfig {
  return {
    url: hook.url ?? '',
    content_type: hook.content_type,
    ...(hook.secret ? { secret: SECRET_MASK } : {}),
    insecure_ssl: hook.insecure_ssl,
  };
}

/** A delivery in detail: its summary, the request it sent and the response it got. */
export function deliveryDetailBody(row: NonNullable<Awaited<ReturnType<typeof store.findDelivery>>>): DeliveryDetail {
  return {
    ...deliverySummaryBody(row),
    url: row.url ?? '',
    // A delivery dropped unsent (its installation suspended or deleted since it was queued) was
    // never made: it carries no payload, which its installation may no longer show the app.
    request: { headers: JSON.parse(row.request_headers ?? '{}') as Record<string, string>, payload: wasDropped(row.status) ? {} : JSON.parse(row.payload) as Record<string, unknown> },
    response: { headers: JSON.parse(row.response_headers ?? '{}') as Record<string, string>, payload: row.response_body },
  };
}
