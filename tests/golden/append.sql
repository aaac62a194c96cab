COPY "public"."payment_callback" (tenant_id, channel, out_trade_no, callback_type, status, payload, received_at) FROM STDIN (FORMAT binary)
