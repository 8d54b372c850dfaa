#!/usr/bin/env bash
# make deploy's question for an alarm address. Usage: alarm-email.sh "$CDK_ARGS"
#
# Prints the CDK arguments to add (-c alarmEmail=ADDRESS, or nothing) on
# stdout; speaks to the operator on stderr. When CDK_ARGS already sets
# alarmEmail, adds nothing. Otherwise, when stdin is a terminal, asks for
# an address (an empty answer deploys without one); when it is not (CI, a
# pipe), says plainly that the alarms and the budget will notify nobody and
# how to set an address, and adds nothing. Exits 1 on an answer that is
# not an email address, after three tries.
set -euo pipefail
case " ${1:-} " in
  *" alarmEmail="* | *"=alarmEmail="* | *"-c alarmEmail"* | *"--context alarmEmail"*) exit 0 ;;
esac
nowhere="make deploy: no alarm address: the alarms and the budget notify the SNS topic AlarmTopicArn, which nobody is subscribed to, so they reach no one.
  Set one with: make deploy CDK_ARGS='-c alarmEmail=you@example.com' (then confirm the mail AWS sends), or subscribe to AlarmTopicArn yourself (docs/deploy.md, Alarms)."
if [ ! -t 0 ]; then
  echo "$nowhere" >&2
  exit 0
fi
for _ in 1 2 3; do
  printf 'Email for the alarms and the budget (empty: none, alarms go nowhere): ' >&2
  IFS= read -r addr || addr=""
  if [ -z "$addr" ]; then
    echo "$nowhere" >&2
    exit 0
  fi
  if [[ "$addr" =~ ^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$ ]]; then
    echo "make deploy: alarms go to $addr (AWS mails a confirmation link first)." >&2
    echo "-c alarmEmail=$addr"
    exit 0
  fi
  echo "make deploy: \"$addr\" is not an email address" >&2
done
exit 1
