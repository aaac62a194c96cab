SELECT count(*), array_agg(s.ord) FROM idemload_stage s CROSS JOIN LATERAL (
 SELECT 1 FROM "public"."payment_callback" t
  WHERE t.tenant_id = s.tenant_id AND t.channel = s.channel AND t.out_trade_no = s.out_trade_no AND t.callback_type = s.callback_type
    AND (deleted_at IS NULL) AND t.received_at > s.received_at
  LIMIT 1) newer WHERE s.ord = ANY ($1::int[])
