/* The messages of the eventing infrastructure itself, which every service publishes. */
export { MessageDeadLettered } from './eventing-message-dead-lettered.v1';
