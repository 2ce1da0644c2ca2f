-- Every usage round rewrites each live attempt's Attempt row and the last part of its series
-- (docs/design.md §7 "Resource usage"). Room left on each page lets the new version go on the
-- same page (a heap-only update: no index entries, the old version pruned in place) instead of
-- at the table's end. Only pages written from now on keep the room; nothing is rewritten.
ALTER TABLE "Attempt" SET (fillfactor = 90);
ALTER TABLE "AttemptUsage" SET (fillfactor = 90);
