/** What a new user sees on an empty jobdeck: how to launch a first job (a viewer, who may not: that nothing runs yet). */
import Link from 'next/link';

export function EmptyState({ maySubmit }: { maySubmit: boolean }) {
  if (!maySubmit) {
    return (
      <section className="card empty" aria-labelledby="empty-title" data-testid="empty-state">
        <h2 id="empty-title">No jobs yet</h2>
        <p>Nothing has been submitted to this server yet. Jobs show here as soon as someone launches one.</p>
      </section>
    );
  }
  return (
    <section className="card empty" aria-labelledby="empty-title" data-testid="empty-state">
      <h2 id="empty-title">No jobs yet</h2>
      <p>jobdeck runs a command or a YAML pipeline of tasks, restarts failed tasks, and streams every log line here as it happens.</p>
      <p style={{ marginBottom: 8 }}>Launch a first job from a terminal:</p>
      <pre>
        <code>{`npx jobdeck launch --cmd "echo hello from jobdeck"\nnpx jobdeck launch examples/hello.yaml`}</code>
      </pre>
      <div className="empty-actions">
        <Link prefetch={false} href="/jobs/new" className="btn btn-primary">
          New job
        </Link>
        <Link prefetch={false} href="/jobs/new?template=pipeline-with-retries" className="btn">
          Start from a pipeline with retries
        </Link>
      </div>
    </section>
  );
}
