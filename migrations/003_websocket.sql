-- WebSocket connections and live subscriptions.
SELECT 1;
