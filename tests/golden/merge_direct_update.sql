WITH merged AS (
 INSERT INTO "public"."payment_callback" AS t (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
 SELECT s.tenant_id, s.channel, s.out_trade_no, s.callback_type, s.status, s.payload::jsonb, s.received_at
   FROM idemload_stage s
  WHERE s.ord BETWEEN $1::int AND $2::int
 ON CONFLICT (tenant_id, channel, out_trade_no, callback_type) WHERE (deleted_at IS NULL)
 DO UPDATE SET payload = CASE WHEN t.received_at <= EXCLUDED.received_at
                              THEN EXCLUDED.payload ELSE t.payload END,
               received_at = greatest(t.received_at, EXCLUDED.received_at),
               status = CASE WHEN t.status = ANY ($3::smallint[]) THEN t.status
                             ELSE EXCLUDED.status END
  WHERE CASE WHEN t.received_at <= EXCLUDED.received_at
             THEN (t.payload, t.received_at, t.status) IS DISTINCT FROM
                  (EXCLUDED.payload, EXCLUDED.received_at,
                   CASE WHEN t.status = ANY ($3::smallint[]) THEN t.status
                        ELSE EXCLUDED.status END)
             ELSE EXCLUDED.status = ANY ($3::smallint[])
                  AND NOT t.status = ANY ($3::smallint[]) END
 RETURNING (t.xmax = 0) AS inserted, t.tenant_id, t.channel, t.out_trade_no, t.callback_type,
           t.status, t.received_at) SELECT (SELECT count(*) FILTER (WHERE inserted) FROM merged),
      (SELECT count(*) FILTER (WHERE NOT inserted) FROM merged), 0,
      CASE WHEN (SELECT count(*) FROM merged) < $2::int - $1::int + 1 THEN (SELECT array_agg(s.ord) FROM idemload_stage s WHERE s.ord BETWEEN $1::int AND $2::int
   AND (s.tenant_id, s.channel, s.out_trade_no, s.callback_type) NOT IN (
       SELECT m.tenant_id, m.channel, m.out_trade_no, m.callback_type FROM merged m)) END,
      (SELECT array_agg(-s.ord) FILTER (WHERE (s.tenant_id, s.channel, s.out_trade_no, s.callback_type) IN (SELECT m.tenant_id, m.channel, m.out_trade_no, m.callback_type FROM merged m WHERE NOT m.inserted))
         FROM idemload_stage s WHERE s.ord BETWEEN $1::int AND $2::int),
      NULL::int[]
