-- Issue 40 (decision 0053): the keys' token buckets by a PL/pgSQL function, so that the statement's plan is kept.
-- Sent as a statement, Postgres planned the upsert afresh every time: its refill arithmetic is repeated in every SET
-- column with a subquery of the batch in each, and planning it cost about 0.45 ms of the backend's CPU a call, more
-- than running it (about 0.73 ms a call in all against 0.27 ms through this function, measured on the same server).
-- A PL/pgSQL function keeps the plan of its statement in the backend, after a few calls a generic one: nothing of a
-- session is set by the caller, so it works the same behind a transaction pooler (decision 0043).
-- The body is the statement that platform/access/rate-limit.ts builds (takeTokensStatement, with takeTokenUpsert) as
-- it compiles, its batch parameter named p_batch: test/access/take-rate-tokens.test.ts fails when the two differ, so
-- a change to the arithmetic comes with a migration that replaces this function. The OUT columns share the bucket's
-- column names, hence use_column.
CREATE FUNCTION take_rate_tokens(p_batch jsonb)
  RETURNS TABLE (api_key_id text, class text, last_allowed boolean, last_granted integer, tokens double precision)
  LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    with "key" as (SELECT * FROM jsonb_to_recordset(p_batch::jsonb) AS x(organization_id text, id text, class text,
    per_minute float8, burst float8, wanted int, prefetch int)), "bucket" as (insert into "rate_limit_buckets"
    ("organization_id", "api_key_id", "class", "tokens", "refilled_at", "last_allowed", "last_granted",
    "per_minute", "burst") select "key"."organization_id", "key"."id", "key"."class", key.burst - CASE WHEN
    key.burst >= 1 THEN LEAST(key.wanted + LEAST(key.prefetch, floor(key.burst / 8)), floor(key.burst))::int ELSE 0
    END as "tokens", statement_timestamp() as "refilled_at", CASE WHEN key.burst >= 1 THEN LEAST(key.wanted +
    LEAST(key.prefetch, floor(key.burst / 8)), floor(key.burst))::int ELSE 0 END >= 1 as "last_allowed", CASE WHEN
    key.burst >= 1 THEN LEAST(key.wanted + LEAST(key.prefetch, floor(key.burst / 8)), floor(key.burst))::int ELSE 0
    END as "last_granted", "key"."per_minute", "key"."burst" from "key" order by "key"."organization_id",
    "key"."id", "key"."class" on conflict ("organization_id", "api_key_id", "class") do update set "tokens" =
    LEAST(excluded.burst, rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() -
    rate_limit_buckets.refilled_at)) * excluded.per_minute / 60) - CASE WHEN LEAST(excluded.burst,
    rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() -
    rate_limit_buckets.refilled_at)) * excluded.per_minute / 60) >= 1 THEN LEAST((SELECT b."wanted" FROM key AS b
    WHERE b.id = rate_limit_buckets.api_key_id AND b.class = rate_limit_buckets.class) + LEAST((SELECT b."prefetch"
    FROM key AS b WHERE b.id = rate_limit_buckets.api_key_id AND b.class = rate_limit_buckets.class),
    floor(LEAST(excluded.burst, rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() -
    rate_limit_buckets.refilled_at)) * excluded.per_minute / 60) / 8)), floor(LEAST(excluded.burst,
    rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() -
    rate_limit_buckets.refilled_at)) * excluded.per_minute / 60)))::int ELSE 0 END, "last_allowed" = CASE WHEN
    LEAST(excluded.burst, rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() -
    rate_limit_buckets.refilled_at)) * excluded.per_minute / 60) >= 1 THEN LEAST((SELECT b."wanted" FROM key AS b
    WHERE b.id = rate_limit_buckets.api_key_id AND b.class = rate_limit_buckets.class) + LEAST((SELECT b."prefetch"
    FROM key AS b WHERE b.id = rate_limit_buckets.api_key_id AND b.class = rate_limit_buckets.class),
    floor(LEAST(excluded.burst, rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() -
    rate_limit_buckets.refilled_at)) * excluded.per_minute / 60) / 8)), floor(LEAST(excluded.burst,
    rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() -
    rate_limit_buckets.refilled_at)) * excluded.per_minute / 60)))::int ELSE 0 END >= 1, "last_granted" = CASE WHEN
    LEAST(excluded.burst, rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() -
    rate_limit_buckets.refilled_at)) * excluded.per_minute / 60) >= 1 THEN LEAST((SELECT b."wanted" FROM key AS b
    WHERE b.id = rate_limit_buckets.api_key_id AND b.class = rate_limit_buckets.class) + LEAST((SELECT b."prefetch"
    FROM key AS b WHERE b.id = rate_limit_buckets.api_key_id AND b.class = rate_limit_buckets.class),
    floor(LEAST(excluded.burst, rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() -
    rate_limit_buckets.refilled_at)) * excluded.per_minute / 60) / 8)), floor(LEAST(excluded.burst,
    rate_limit_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() -
    rate_limit_buckets.refilled_at)) * excluded.per_minute / 60)))::int ELSE 0 END, "refilled_at" =
    GREATEST(rate_limit_buckets.refilled_at, statement_timestamp()), "per_minute" = "excluded"."per_minute", "burst"
    = "excluded"."burst" returning "api_key_id", "class", "last_allowed", "last_granted", "tokens") select * from
    "bucket";
END;
$$;
