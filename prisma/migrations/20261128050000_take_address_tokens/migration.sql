-- Issue 40 (decision 0056): the budgets per address of keyless requests by a PL/pgSQL function, so that the
-- statement's plan is kept, as take_rate_tokens keeps the keys' (decision 0053). Sent as a statement, Postgres
-- planned the upsert afresh every time (its refill arithmetic is repeated in every SET column, with a subquery of the
-- batch in each): about 0.7 ms of the backend's CPU a call with its run, measured on this server.
-- The body is the statement that platform/access/address-budget.ts builds (takeAddressTokensStatement) as it
-- compiles, its batch parameter named p_batch: test/access/take-rate-tokens.test.ts fails when the two differ, so a
-- change to the arithmetic comes with a migration that replaces this function. The OUT columns share the bucket's
-- column names, hence use_column.
CREATE FUNCTION take_address_tokens(p_batch jsonb)
  RETURNS TABLE (address text, tokens double precision, last_granted integer)
  LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    with "waiting" as (SELECT * FROM jsonb_to_recordset(p_batch::jsonb) AS x(address text, per_minute float8, burst
    float8, wanted int, prefetch int)), "bucket" as (insert into "address_rate_buckets" ("address", "tokens",
    "refilled_at", "last_granted") select "waiting"."address", waiting.burst - CASE WHEN waiting.burst >= 1 THEN
    LEAST(waiting.wanted + LEAST(waiting.prefetch, floor(waiting.burst / 8)), floor(waiting.burst))::int ELSE 0 END
    as "tokens", statement_timestamp() as "refilled_at", CASE WHEN waiting.burst >= 1 THEN LEAST(waiting.wanted +
    LEAST(waiting.prefetch, floor(waiting.burst / 8)), floor(waiting.burst))::int ELSE 0 END as "last_granted" from
    "waiting" order by "waiting"."address" on conflict ("address") do update set "tokens" = LEAST((SELECT w."burst"
    FROM waiting AS w WHERE w.address = address_rate_buckets.address), address_rate_buckets.tokens + GREATEST(0,
    EXTRACT(EPOCH FROM statement_timestamp() - address_rate_buckets.refilled_at)) * (SELECT w."per_minute" FROM
    waiting AS w WHERE w.address = address_rate_buckets.address) / 60) - CASE WHEN LEAST((SELECT w."burst" FROM
    waiting AS w WHERE w.address = address_rate_buckets.address), address_rate_buckets.tokens + GREATEST(0,
    EXTRACT(EPOCH FROM statement_timestamp() - address_rate_buckets.refilled_at)) * (SELECT w."per_minute" FROM
    waiting AS w WHERE w.address = address_rate_buckets.address) / 60) >= 1 THEN LEAST((SELECT w."wanted" FROM
    waiting AS w WHERE w.address = address_rate_buckets.address) + LEAST((SELECT w."prefetch" FROM waiting AS w
    WHERE w.address = address_rate_buckets.address), floor(LEAST((SELECT w."burst" FROM waiting AS w WHERE w.address
    = address_rate_buckets.address), address_rate_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM
    statement_timestamp() - address_rate_buckets.refilled_at)) * (SELECT w."per_minute" FROM waiting AS w WHERE
    w.address = address_rate_buckets.address) / 60) / 8)), floor(LEAST((SELECT w."burst" FROM waiting AS w WHERE
    w.address = address_rate_buckets.address), address_rate_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM
    statement_timestamp() - address_rate_buckets.refilled_at)) * (SELECT w."per_minute" FROM waiting AS w WHERE
    w.address = address_rate_buckets.address) / 60)))::int ELSE 0 END, "last_granted" = CASE WHEN LEAST((SELECT
    w."burst" FROM waiting AS w WHERE w.address = address_rate_buckets.address), address_rate_buckets.tokens +
    GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - address_rate_buckets.refilled_at)) * (SELECT
    w."per_minute" FROM waiting AS w WHERE w.address = address_rate_buckets.address) / 60) >= 1 THEN LEAST((SELECT
    w."wanted" FROM waiting AS w WHERE w.address = address_rate_buckets.address) + LEAST((SELECT w."prefetch" FROM
    waiting AS w WHERE w.address = address_rate_buckets.address), floor(LEAST((SELECT w."burst" FROM waiting AS w
    WHERE w.address = address_rate_buckets.address), address_rate_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM
    statement_timestamp() - address_rate_buckets.refilled_at)) * (SELECT w."per_minute" FROM waiting AS w WHERE
    w.address = address_rate_buckets.address) / 60) / 8)), floor(LEAST((SELECT w."burst" FROM waiting AS w WHERE
    w.address = address_rate_buckets.address), address_rate_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM
    statement_timestamp() - address_rate_buckets.refilled_at)) * (SELECT w."per_minute" FROM waiting AS w WHERE
    w.address = address_rate_buckets.address) / 60)))::int ELSE 0 END, "refilled_at" =
    GREATEST(address_rate_buckets.refilled_at, statement_timestamp()) returning "address", "tokens", "last_granted")
    select * from "bucket";
END;
$$;
