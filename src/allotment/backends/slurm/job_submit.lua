-- allotment active mode: every new job waits until the reconciler has ranked it.
--
-- Why: Slurm tries to start a job as soon as it is submitted (and at every scheduling cycle)
-- when nothing of higher priority waits, on nodes select/cons_tres chooses.  The core places
-- jobs best fit; a job Slurm placed itself sits elsewhere than the core planned, and every gang
-- reservation and preemption after it diverges (docs/fidelity.md).  So a new job gets a begin
-- time ten years out and an admin comment saying why; the reconciler's next tick (one
-- reconcile_interval at most) starts it where the core places it, or orders it, with one
-- `scontrol update JobId=J Priority=P StartTime=now [ReqNodeList=...]`.
-- A job submitted with its own --begin is left alone.  Without the reconciler running no new
-- job starts: install this only with allotment in active mode.
--
-- Install: copy next to slurm.conf and set JobSubmitPlugins=lua (tests/slurm/up.sh does with
-- SLURM_HOLD_NEW=1).  The comment must match backends/slurm/parse.py HOLD_MARK.

local HOLD_MARK = "allotment: waits for the reconciler"
local HOLD_S = 10 * 365 * 86400  -- backends/slurm/parse.py HOLD_S

function slurm_job_submit(job_desc, part_list, submit_uid)
   if job_desc.begin_time == nil or job_desc.begin_time == 0 then
      job_desc.begin_time = os.time() + HOLD_S
      job_desc.admin_comment = HOLD_MARK
   end
   return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return slurm.SUCCESS
end
