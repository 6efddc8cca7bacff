// The framework floor: a bare graphql-yoga `{ hello }` on node:http. Prints `ready {"port":…}`.
import { createServer } from "node:http";
import { createSchema, createYoga } from "graphql-yoga";

const yoga = createYoga({
  schema: createSchema({ typeDefs: "type Query { hello: String! }", resolvers: { Query: { hello: () => "world" } } }),
  logging: false,
});
const server = createServer(yoga);
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address() as { port: number };
  console.log(`ready ${JSON.stringify({ port: address.port })}`);
});
