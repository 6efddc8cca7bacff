-- CreateIndex
CREATE INDEX "federation_followers_actor_id_idx" ON "federation_followers"("actor_id");

-- CreateIndex
CREATE INDEX "federation_objects_object_id_idx" ON "federation_objects"("object_id");
