"""The `prompt` kind (LLM-as-judge), one package: the kind and its options (`kind`), what the
judge is told and shown (`text`), the two wire formats (`providers`), HTTP with retries and
the API key kept out of every text (`client`), reading a score out of a reply (`reply`), one
call and one grade's result (`grade`), and what a run's judge calls share: the limit on
requests in flight, the statistics and the reply cache (`shared`, kept in the run context of
`gradekit.core.context`, never in a module global).

The entry point is `gradekit.graders.prompt.kind:Prompt`. Only `client` imports aiohttp, and
`kind` imports it (through `grade`) only when a grader is made or grades: `import gradekit`
and listing kinds never load it.

May import: `core`, the helpers of `graders` (the same package of the layout), and aiohttp
(in `client`)."""
