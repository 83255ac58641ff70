# The conform image that the Kubernetes fan-out Job runs (deploy/k8s/fanout-job.yaml). It holds what
# `npm pack` ships (bin/, the compiled dist/, schemas/, README), installed without dev dependencies,
# and runs as a non-root user. No key is in it: the Job gives the key from a Secret at run time.
#   docker build -t registry.example.com/conform:0.1.0 .

FROM node:24-slim AS pack
WORKDIR /src
# Dependencies first, so a source change reuses this layer; scripts wait for the sources (prepare
# compiles them).
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
# npm pack runs prepack (npm run build): the tarball carries the compiled JavaScript, no sources.
RUN npm pack --silent && mv conform-*.tgz /tmp/conform.tgz

FROM node:24-slim
ENV NODE_ENV=production
COPY --from=pack /tmp/conform.tgz /tmp/conform.tgz
RUN npm install --global --omit=dev --no-audit --no-fund /tmp/conform.tgz \
    && rm /tmp/conform.tgz \
    && npm cache clean --force
# The image's `node` user, by number, so a pod's runAsNonRoot can verify it.
USER 1000:1000
WORKDIR /home/node
ENTRYPOINT ["conform"]
CMD ["--help"]
