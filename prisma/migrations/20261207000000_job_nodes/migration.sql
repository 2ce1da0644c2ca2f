-- Nodes a job asks for at once (the max over its tasks of num_nodes), for admission.
ALTER TABLE "Job" ADD COLUMN "nodes" INTEGER NOT NULL DEFAULT 1;
