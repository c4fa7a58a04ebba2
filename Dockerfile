# syntax=docker/dockerfile:1
# Node 24 (an LTS release in support; Node 20 reached its end of life in April 2026).
# Sources stage: full dependencies and the sources both builds compile.
FROM node:24-bookworm-slim AS sources
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: tsc needs no install script, and the only ones allowed (the embedded
# Postgres's, for the tests) belong to development dependencies the prune below removes
# (docs/decisions.md, "What the image holds").
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json tsconfig.dev.json ormconfig.ts ./
COPY src ./src

# Build stage: the production build only (tsconfig.build.json: src/ without src/devnet, no
# bench, no tests), then production dependencies only. --omit=optional: the optional packages
# are never loaded (the chain client's light client, @substrate/connect and smoldot, GPL-3.0;
# pg's Cloudflare socket), so the image does not ship them (docs/decisions.md, "What the image
# holds").
FROM sources AS build
RUN npm run build && npm prune --omit=dev --omit=optional

# The simulated subnet (docker compose --profile devnet): the development build of the devnet,
# a separate image target so that the default image holds no simulator.
FROM sources AS devnet-build
COPY bench ./bench
RUN npm run build:dev && npm prune --omit=dev --omit=optional

FROM node:24-bookworm-slim AS devnet
ENV NODE_ENV=production
WORKDIR /app
# Code and dependencies owned by root, readable by the `node` user, which cannot change them.
COPY --from=devnet-build /app/node_modules ./node_modules
COPY --from=devnet-build /app/dist-dev ./dist-dev
COPY package.json LICENSE ./
# a+r: COPY keeps the checkout's modes, and one made under umask 077 is readable by its owner only.
# /devnet: the devnet profile's volume (a new named volume takes this directory's owner). Group 0
# may write it too: a platform that runs the image as an arbitrary uid in group 0 (OpenShift).
RUN chmod a+r package.json LICENSE && mkdir -p /devnet && chown node:0 /devnet && chmod 775 /devnet
USER node
CMD ["node", "dist-dev/src/devnet/cli.js"]

# Runtime stage (the default target, last): production dependencies and the production build
# only, as a non-root user.
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# git (and ssh for ssh:// remotes) publishes votes to the Gravity repository (GRAVITY_REPO_URL).
# tini: an init that reaps what node does not (README, "Shutdown").
RUN apt-get update \
  && apt-get install -y --no-install-recommends git openssh-client ca-certificates tini \
  && rm -rf /var/lib/apt/lists/*
# Code, dependencies and the default desirabilities owned by root, readable by the `node` user,
# which cannot change them: it owns only DATA_DIR (/app/.data), the one place the app writes,
# which group 0 may write too: OpenShift runs the image as an arbitrary uid in group 0, and the
# start failed on DATA_DIR (EACCES) without a volume mounted over it (a restricted-runtime audit).
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json LICENSE ./
COPY config/default-desirabilities.json ./config/default-desirabilities.json
# a+r: COPY keeps the checkout's modes, and one made under umask 077 is readable by its owner only.
RUN chmod a+r package.json LICENSE config/default-desirabilities.json \
  && mkdir -p /app/.data && chown node:0 /app/.data && chmod 775 /app/.data
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "require('http').get('http://127.0.0.1:'+(process.env.PORT||3000)+'/',r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1))"
# tini runs node and passes signals on to it. -s: it reaps orphans also when it is not PID 1
# itself (compose's `init: true` puts docker's own init there).
ENTRYPOINT ["/usr/bin/tini", "-s", "--"]
CMD ["node", "dist/src/main.js"]
