-- CreateTable
CREATE TABLE "secret_key_check" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "sealed" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "secret_key_check_pkey" PRIMARY KEY ("id")
);
