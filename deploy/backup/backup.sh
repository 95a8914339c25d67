#!/bin/sh
# One backup of a running neobot, uploaded to S3-compatible object storage.
# On fly.io it runs as a scheduled Machine (docs/deploy.md, "Backups"):
#   NEO_ADMIN_URL     the bot's admin API, e.g. http://your-neobot-app.internal:8080
#   NEO_ADMIN_TOKEN   the bot's admin token (the bot also sets NEO_ADMIN_REMOTE=true)
#   BUCKET_NAME, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL_S3,
#   AWS_REGION        set by `fly storage create` (Tigris) or by hand
#   BACKUP_PREFIX     folder in the bucket (default neobot)
# neobot checks the copy (bbolt's check, schema, every bucket) before it is
# uploaded; a failed backup exits non-zero and uploads nothing.
set -eu
: "${NEO_ADMIN_URL:?set NEO_ADMIN_URL to the bot admin API, e.g. http://your-neobot-app.internal:8080}"
: "${NEO_ADMIN_TOKEN:?set NEO_ADMIN_TOKEN to the bot admin token}"
: "${BUCKET_NAME:?set BUCKET_NAME (fly storage create sets it)}"
: "${AWS_ENDPOINT_URL_S3:?set AWS_ENDPOINT_URL_S3 (fly storage create sets it)}"
name="neobot-$(date -u +%Y%m%dT%H%M%SZ).db"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# No database file here: neobot asks the running bot for its copy.
NEO_DB_PATH="$dir/no-database-here.db" neobot store backup "$dir/$name"
rclone copyto "$dir/$name" ":s3:$BUCKET_NAME/${BACKUP_PREFIX:-neobot}/$name" \
	--s3-provider Other --s3-env-auth --s3-endpoint "$AWS_ENDPOINT_URL_S3" --s3-region "${AWS_REGION:-auto}"
echo "uploaded $name to $BUCKET_NAME/${BACKUP_PREFIX:-neobot}/"
