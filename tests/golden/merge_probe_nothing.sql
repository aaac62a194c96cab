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
 INSERT INTO "public"."payment_callback" AS t (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at)
 SELECT v.tenant_id, v.channel, v.out_trade_no, v.callback_type, v.status, v.payload::jsonb, v.received_at
   FROM verdicts v
  WHERE v.verdict = 0
 ON CONFLICT (tenant_id, channel, out_trade_no, callback_type) WHERE (deleted_at IS NULL) DO NOTHING
 RETURNING true AS inserted, t.tenant_id, t.channel, t.out_trade_no, t.callback_type) SELECT (SELECT count(*) FILTER (WHERE inserted) FROM merged),
      (SELECT count(*) FILTER (WHERE NOT inserted) FROM merged),
      (SELECT count(*) FILTER (WHERE verdict = 1) FROM verdicts),
      NULL::int[],
      (SELECT array_agg(CASE WHEN (v.tenant_id, v.channel, v.out_trade_no, v.callback_type) IN (SELECT m.tenant_id, m.channel, m.out_trade_no, m.callback_type FROM merged m WHERE m.inserted)
                             THEN v.ord ELSE -v.ord END)
               FILTER (WHERE (v.tenant_id, v.channel, v.out_trade_no, v.callback_type) IN (SELECT m.tenant_id, m.channel, m.out_trade_no, m.callback_type FROM merged m WHERE true))
         FROM verdicts v WHERE v.verdict = 0),
      (SELECT array_agg(v.ord) FROM verdicts v WHERE v.verdict = 1)
