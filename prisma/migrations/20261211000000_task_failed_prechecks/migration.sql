-- A task whose launch its own spec makes impossible (a relative workdir, say) ends
-- FAILED_PRECHECKS, and its job with it, instead of being recovered as a lost attempt.
ALTER TYPE "TaskStatus" ADD VALUE 'FAILED_PRECHECKS' AFTER 'FAILED_SETUP';
