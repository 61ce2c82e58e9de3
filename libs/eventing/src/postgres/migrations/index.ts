import { EventingTables1732900000000 } from './0001-eventing.migration';

/** The eventing tables' migrations, in order. Services append their own after these. */
export const eventingMigrations = [EventingTables1732900000000];
