-- The data folder this database belongs to (one row): a server refuses to start on a database
-- recorded for another folder, or on a folder recorded for another database (lib/db/identity.ts).
CREATE TABLE "DataFolder" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "databaseId" TEXT NOT NULL,
    "folderId" TEXT NOT NULL,
    "folderPath" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DataFolder_pkey" PRIMARY KEY ("id")
);
