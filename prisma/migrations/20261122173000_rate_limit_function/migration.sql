-- Token bucket of one API key and request class: refills perMinute/60 tokens a second up to burst, takes one
-- token when there is one. The row lock serialises concurrent requests of the key, so every process on this
-- database draws on one budget. Written by hand: Prisma does not model functions.
CREATE FUNCTION take_rate_limit_token(p_org TEXT, p_key TEXT, p_class TEXT, p_per_minute DOUBLE PRECISION, p_burst DOUBLE PRECISION)
RETURNS TABLE (allowed BOOLEAN, remaining DOUBLE PRECISION)
LANGUAGE plpgsql AS $$
DECLARE
  v_tokens DOUBLE PRECISION;
  v_refilled TIMESTAMPTZ;
  v_now TIMESTAMPTZ;
BEGIN
  INSERT INTO rate_limit_buckets (organization_id, api_key_id, class, tokens, refilled_at)
  VALUES (p_org, p_key, p_class, p_burst, clock_timestamp())
  ON CONFLICT DO NOTHING;
  SELECT b.tokens, b.refilled_at INTO v_tokens, v_refilled
  FROM rate_limit_buckets b
  WHERE b.organization_id = p_org AND b.api_key_id = p_key AND b.class = p_class
  FOR UPDATE;
  v_now := clock_timestamp();
  v_tokens := LEAST(p_burst, v_tokens + GREATEST(0, EXTRACT(EPOCH FROM v_now - v_refilled)) * p_per_minute / 60.0);
  allowed := v_tokens >= 1;
  IF allowed THEN
    v_tokens := v_tokens - 1;
  END IF;
  UPDATE rate_limit_buckets SET tokens = v_tokens, refilled_at = v_now
  WHERE organization_id = p_org AND api_key_id = p_key AND class = p_class;
  remaining := v_tokens;
  RETURN NEXT;
END
$$;
