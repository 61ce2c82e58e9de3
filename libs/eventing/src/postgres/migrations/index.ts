import { EventingTables1732900000000 } from './0001-eventing.migration';
import { AppendFunction1732900000001 } from './0002-append-function.migration';
import { SetBasedAppend1732900000002 } from './0003-set-based-append.migration';
import { PlanPerCallAppend1732900000003 } from './0004-plan-per-call-append.migration';
import { GenericPlanAppend1732900000004 } from './0005-generic-plan-append.migration';
import { PrivateEventsSnapshots1732900000005 } from './0006-private-events-snapshots.migration';

/** The eventing tables' migrations, in order. Services append their own after these. */
export const eventingMigrations = [
  EventingTables1732900000000,
  AppendFunction1732900000001,
  SetBasedAppend1732900000002,
  PlanPerCallAppend1732900000003,
  GenericPlanAppend1732900000004,
  PrivateEventsSnapshots1732900000005,
];
