# edgeplane's container image: the built server on the current Node.js LTS (24), as a non-root
# user, with its data directory (SQLite, the master key, generated TLS) in a volume.
#   docker build -t edgeplane .
#   docker run -p 8443:8443 -v edgeplane-data:/var/lib/edgeplane edgeplane
# Three instances with PostgreSQL, Redis and a load balancer for every public port: deploy/compose.yaml.

# Build: dependencies (better-sqlite3 is a native addon: the full image has python, make and g++
# for the rare platform without a prebuilt binary), then the TypeScript, then production
# dependencies only.
FROM node:24-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    EDGEPLANE_DATA_DIR=/var/lib/edgeplane \
    EDGEPLANE_LISTEN=0.0.0.0:8443
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
RUN mkdir -p /var/lib/edgeplane && chown node:node /var/lib/edgeplane && chmod 700 /var/lib/edgeplane
USER node
VOLUME /var/lib/edgeplane
EXPOSE 8443
# Ready: the store answers and its migrations are current (GET /readyz). Plain HTTP when
# EDGEPLANE_TLS=off; the local CA's HTTPS otherwise, whose certificate the probe does not check.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node --no-warnings -e "const s=process.env.EDGEPLANE_TLS==='off'?'http':'https';process.env.NODE_TLS_REJECT_UNAUTHORIZED='0';fetch(s+'://127.0.0.1:'+(process.env.EDGEPLANE_LISTEN||'').split(':').pop()+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# serve handles SIGTERM itself: it stops accepting, drains requests, streams and jobs, then exits
# (EDGEPLANE_DRAIN_TIMEOUT + 5 s at most: give `docker stop -t` more than that).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["serve"]
