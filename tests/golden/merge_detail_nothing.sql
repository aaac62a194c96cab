WITH merged AS (
 INSERT INTO "public"."payment_callback" AS t (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
 SELECT s.tenant_id, s.channel, s.out_trade_no, s.callback_type, s.status, s.payload::jsonb, s.received_at
   FROM idemload_stage s
  WHERE s.ord BETWEEN $1::int AND $2::int
 ON CONFLICT (tenant_id, channel, out_trade_no, callback_type) WHERE (deleted_at IS NULL) DO NOTHING
 RETURNING true AS inserted, t.tenant_id, t.channel, t.out_trade_no, t.callback_type) SELECT s.ord, s.status, coalesce(to_char((s.received_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), (s.received_at)::text)
 FROM idemload_stage s JOIN merged m
   ON m.tenant_id = s.tenant_id AND m.channel = s.channel AND m.out_trade_no = s.out_trade_no AND m.callback_type = s.callback_type WHERE s.ord BETWEEN $1::int AND $2::int
