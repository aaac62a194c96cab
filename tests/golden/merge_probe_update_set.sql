WITH verdicts AS MATERIALIZED (
 SELECT s.*,
        CASE WHEN cur.received_at IS NULL THEN 0
             WHEN cur.received_at > s.received_at THEN
                  CASE WHEN s.status = ANY ($3::smallint[])
                        AND NOT cur.status = ANY ($3::smallint[]) THEN 0 ELSE 1 END
             WHEN cur.received_at = s.received_at AND cur.payload = s.payload::jsonb
              AND cur.status = CASE WHEN cur.status = ANY ($3::smallint[]) THEN cur.status
                                    ELSE s.status END THEN 2
             ELSE 0 END AS verdict
   FROM idemload_stage s
   LEFT JOIN LATERAL (
     SELECT t.received_at, t.payload, t.status FROM "public"."payment_callback" t
      WHERE t.tenant_id = s.tenant_id AND t.channel = s.channel AND t.out_trade_no = s.out_trade_no AND t.callback_type = s.callback_type
        AND (deleted_at IS NULL)
      LIMIT 1) cur ON true
  WHERE s.ord BETWEEN $1::int AND $2::int), merged AS (
 INSERT INTO "public"."payment_callback" AS t (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at, "merchant_id")
 SELECT v.tenant_id, v.channel, v.out_trade_no, v.callback_type, v.status, v.payload::jsonb, v.received_at, $4::bigint
   FROM verdicts v
  WHERE v.verdict = 0
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
      (SELECT count(*) FILTER (WHERE NOT inserted) FROM merged),
      (SELECT count(*) FILTER (WHERE verdict = 1) FROM verdicts),
      CASE WHEN (SELECT count(*) FROM merged)
       < (SELECT count(*) FROM verdicts v WHERE v.verdict = 0) THEN (SELECT array_agg(v.ord) FROM verdicts v WHERE v.verdict = 0
   AND (v.tenant_id, v.channel, v.out_trade_no, v.callback_type) NOT IN (
       SELECT m.tenant_id, m.channel, m.out_trade_no, m.callback_type FROM merged m)) END,
      (SELECT array_agg(CASE WHEN (v.tenant_id, v.channel, v.out_trade_no, v.callback_type) IN (SELECT m.tenant_id, m.channel, m.out_trade_no, m.callback_type FROM merged m WHERE m.inserted)
                             THEN v.ord ELSE -v.ord END)
               FILTER (WHERE (v.tenant_id, v.channel, v.out_trade_no, v.callback_type) IN (SELECT m.tenant_id, m.channel, m.out_trade_no, m.callback_type FROM merged m WHERE true))
         FROM verdicts v WHERE v.verdict = 0),
      (SELECT array_agg(v.ord) FROM verdicts v WHERE v.verdict = 1)
