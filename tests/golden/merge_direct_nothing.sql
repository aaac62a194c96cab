WITH merged AS (
 INSERT INTO "public"."payment_callback" AS t (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
 SELECT s.tenant_id, s.channel, s.out_trade_no, s.callback_type, s.status, s.payload::jsonb, s.received_at
   FROM idemload_stage s
  WHERE s.ord BETWEEN $1::int AND $2::int
 ON CONFLICT (tenant_id, channel, out_trade_no, callback_type) WHERE (deleted_at IS NULL) DO NOTHING
 RETURNING true AS inserted, t.tenant_id, t.channel, t.out_trade_no, t.callback_type) SELECT (SELECT count(*) FILTER (WHERE inserted) FROM merged),
      (SELECT count(*) FILTER (WHERE NOT inserted) FROM merged), 0,
      CASE WHEN (SELECT count(*) FROM merged) < $2::int - $1::int + 1 THEN (SELECT array_agg(s.ord) FROM idemload_stage s WHERE s.ord BETWEEN $1::int AND $2::int
   AND (s.tenant_id, s.channel, s.out_trade_no, s.callback_type) NOT IN (
       SELECT m.tenant_id, m.channel, m.out_trade_no, m.callback_type FROM merged m)) END,
      (SELECT array_agg(-s.ord) FILTER (WHERE (s.tenant_id, s.channel, s.out_trade_no, s.callback_type) IN (SELECT m.tenant_id, m.channel, m.out_trade_no, m.callback_type FROM merged m WHERE NOT m.inserted))
         FROM idemload_stage s WHERE s.ord BETWEEN $1::int AND $2::int),
      NULL::int[]
