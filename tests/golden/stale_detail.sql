SELECT s.ord, newer.status, coalesce(to_char((newer.received_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), (newer.received_at)::text),
      s.status, coalesce(to_char((s.received_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), (s.received_at)::text)
 FROM idemload_stage s CROSS JOIN LATERAL (
 SELECT t.status, t.received_at FROM "public"."payment_callback" t
  WHERE t.tenant_id = s.tenant_id AND t.channel = s.channel AND t.out_trade_no = s.out_trade_no AND t.callback_type = s.callback_type
    AND (deleted_at IS NULL) AND t.received_at > s.received_at
  LIMIT 1) newer WHERE s.ord = ANY ($1::int[])
