WITH merged AS (
 INSERT INTO "public"."payment_callback" AS t (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
 SELECT s.tenant_id, s.channel, s.out_trade_no, s.callback_type, s.status, s.payload::jsonb, s.received_at
   FROM idemload_stage s
  WHERE s.ord BETWEEN $1::int AND $2::int
 ON CONFLICT (tenant_id, channel, out_trade_no, callback_type) WHERE (deleted_at IS NULL) DO NOTHING
 RETURNING true AS inserted, t.tenant_id, t.channel, t.out_trade_no, t.callback_type) SELECT x.ord, x.status, coalesce(to_char((x.received_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), (x.received_at)::text)
 FROM (SELECT s.ord, s.status, s.received_at, (s.tenant_id, s.channel, s.out_trade_no, s.callback_type) IN (SELECT m.tenant_id, m.channel, m.out_trade_no, m.callback_type FROM merged m WHERE true) AS written
         FROM idemload_stage s WHERE s.ord BETWEEN $1::int AND $2::int
       OFFSET 0) x WHERE x.written
