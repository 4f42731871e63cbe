-- The worker's dispatch loops sleep until there is work (platform/jobs/wake.ts, decision 0040). Every statement that
-- makes work due tells them on commit, through NOTIFY on the channel work_due, its payload naming the loop: a DMS
-- document received or woken ('dms'), a DMS file received ('dms'), a posting to queue ('postings'), an event to fan
-- out ('events'). A trigger, not the application, sends it, so no write path (an operator's SQL, a later module) can
-- make work due without the loops hearing of it. Statement-level with the new rows as a transition table: one
-- notification per statement at most (Postgres also folds identical ones of a transaction into one), and none for
-- the loops' own writes that make nothing due (a lease moves next_attempt_at ahead; a posted document is no longer
-- received). Work due later (a retry) is not told: the loops read when the next one is due and sleep until then.
-- "Due now" allows the 5 seconds ahead of the statement's clock: a row's time may come from the application's clock,
-- a little after the transaction's now(); a loop woken early reads when it falls due and sleeps until then.
CREATE FUNCTION notify_work_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'dms_documents' THEN
    IF EXISTS (SELECT 1 FROM new_rows WHERE state = 'received' AND next_attempt_at <= clock_timestamp() + interval '5 seconds') THEN
      PERFORM pg_notify('work_due', 'dms');
    END IF;
  ELSIF TG_TABLE_NAME = 'dms_batches' THEN
    IF EXISTS (SELECT 1 FROM new_rows WHERE file_status = 'received') THEN
      PERFORM pg_notify('work_due', 'dms');
    END IF;
  ELSIF TG_TABLE_NAME = 'external_postings' THEN
    IF EXISTS (SELECT 1 FROM new_rows WHERE status = 'pending' AND queued_at IS NULL AND next_attempt_at <= clock_timestamp() + interval '5 seconds') THEN
      PERFORM pg_notify('work_due', 'postings');
    END IF;
  ELSIF TG_TABLE_NAME = 'events' THEN
    IF EXISTS (SELECT 1 FROM new_rows WHERE dispatched_at IS NULL) THEN
      PERFORM pg_notify('work_due', 'events');
    END IF;
  END IF;
  RETURN NULL;
END;
$$;

-- A trigger with transition tables takes one event: one for inserts and one for updates.
CREATE TRIGGER dms_documents_work_inserted AFTER INSERT ON dms_documents
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION notify_work_due();
CREATE TRIGGER dms_documents_work_updated AFTER UPDATE ON dms_documents
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION notify_work_due();
CREATE TRIGGER dms_batches_work_inserted AFTER INSERT ON dms_batches
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION notify_work_due();
CREATE TRIGGER dms_batches_work_updated AFTER UPDATE ON dms_batches
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION notify_work_due();
CREATE TRIGGER external_postings_work_inserted AFTER INSERT ON external_postings
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION notify_work_due();
CREATE TRIGGER external_postings_work_updated AFTER UPDATE ON external_postings
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION notify_work_due();
CREATE TRIGGER events_work_inserted AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION notify_work_due();
