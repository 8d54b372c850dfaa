-- Buzz desktop's admin console reopens a closed report
-- (POST /api/admin/v1/reports/{id}/reopen, NIP-86 reopenreport) with a
-- client's idempotency key: the key of the last reopen is kept, so a retry
-- answers the same success without reopening again a report closed since.
ALTER TABLE moderation_reports ADD COLUMN reopen_request text;
