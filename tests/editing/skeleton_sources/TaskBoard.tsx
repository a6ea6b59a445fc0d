import React, { useCallback, useEffect, useMemo, useReducer, useState } from "react";
import { fetchTasks, saveTask, type Task, type TaskStatus } from "../api/tasks";
import { Avatar } from "./Avatar";
import { Spinner } from "./Spinner";
import styles from "./TaskBoard.module.css";

const COLUMNS: { status: TaskStatus; title: string }[] = [
  { status: "todo", title: "To do" },
  { status: "doing", title: "In progress" },
  { status: "review", title: "In review" },
  { status: "done", title: "Done" },
];

type State = {
  tasks: Task[];
  loading: boolean;
  error: string | null;
  dragging: string | null;
};

type Action =
  | { type: "loaded"; tasks: Task[] }
  | { type: "failed"; error: string }
  | { type: "moved"; id: string; status: TaskStatus }
  | { type: "drag"; id: string | null };

function reducer(state: State, action: Action): State {
  switch (action.type) {
    case "loaded":
      return { ...state, tasks: action.tasks, loading: false, error: null };
    case "failed":
      return { ...state, loading: false, error: action.error };
    case "moved":
      return {
        ...state,
        tasks: state.tasks.map((task) =>
          task.id === action.id ? { ...task, status: action.status } : task,
        ),
      };
    case "drag":
      return { ...state, dragging: action.id };
    default:
      return state;
  }
}

export interface TaskBoardProps {
  projectId: string;
  currentUserId: string;
  onOpenTask?: (task: Task) => void;
  readOnly?: boolean;
}

function useTasks(projectId: string) {
  const [state, dispatch] = useReducer(reducer, {
    tasks: [],
    loading: true,
    error: null,
    dragging: null,
  });

  useEffect(() => {
    let cancelled = false;
    fetchTasks(projectId)
      .then((tasks) => {
        if (!cancelled) {
          dispatch({ type: "loaded", tasks });
        }
      })
      .catch((error: Error) => {
        if (!cancelled) {
          dispatch({ type: "failed", error: error.message });
        }
      });
    return () => {
      cancelled = true;
    };
  }, [projectId]);

  return [state, dispatch] as const;
}

function TaskCard({
  task,
  onOpen,
  onDragStart,
  draggable,
}: {
  task: Task;
  onOpen: () => void;
  onDragStart: () => void;
  draggable: boolean;
}) {
  const overdue = task.dueDate !== undefined && new Date(task.dueDate) < new Date();
  return (
    <li
      className={overdue ? `${styles.card} ${styles.overdue}` : styles.card}
      draggable={draggable}
      onDragStart={onDragStart}
      onClick={onOpen}
    >
      <div className={styles.cardHeader}>
        <span className={styles.key}>{task.key}</span>
        {task.assignee && <Avatar user={task.assignee} size={20} />}
      </div>
      <p className={styles.title}>{task.title}</p>
      {task.labels.length > 0 && (
        <ul className={styles.labels}>
          {task.labels.map((label) => (
            <li key={label} className={styles.label}>
              {label}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

export function TaskBoard({ projectId, currentUserId, onOpenTask, readOnly = false }: TaskBoardProps) {
  const [state, dispatch] = useTasks(projectId);
  const [onlyMine, setOnlyMine] = useState(false);

  const visible = useMemo(
    () =>
      onlyMine ? state.tasks.filter((task) => task.assignee?.id === currentUserId) : state.tasks,
    [state.tasks, onlyMine, currentUserId],
  );

  const drop = useCallback(
    async (status: TaskStatus) => {
      const id = state.dragging;
      dispatch({ type: "drag", id: null });
      if (id === null || readOnly) {
        return;
      }
      const task = state.tasks.find((candidate) => candidate.id === id);
      if (!task || task.status === status) {
        return;
      }
      dispatch({ type: "moved", id, status });
      try {
        await saveTask({ ...task, status });
      } catch (error) {
        dispatch({ type: "moved", id, status: task.status });
      }
    },
    [state.dragging, state.tasks, readOnly, dispatch],
  );

  if (state.loading) {
    return <Spinner label="Loading tasks" />;
  }
  if (state.error) {
    return <p role="alert">Could not load tasks: {state.error}</p>;
  }

  return (
    <section className={styles.board}>
      <header className={styles.toolbar}>
        <label>
          <input
            type="checkbox"
            checked={onlyMine}
            onChange={(event) => setOnlyMine(event.target.checked)}
          />
          Only my tasks
        </label>
        <span>{visible.length} tasks</span>
      </header>
      <div className={styles.columns}>
        {COLUMNS.map((column) => (
          <div
            key={column.status}
            className={styles.column}
            onDragOver={(event) => event.preventDefault()}
            onDrop={() => drop(column.status)}
          >
            <h2>{column.title}</h2>
            <ul>
              {visible
                .filter((task) => task.status === column.status)
                .map((task) => (
                  <TaskCard
                    key={task.id}
                    task={task}
                    draggable={!readOnly}
                    onOpen={() => onOpenTask?.(task)}
                    onDragStart={() => dispatch({ type: "drag", id: task.id })}
                  />
                ))}
            </ul>
          </div>
        ))}
      </div>
    </section>
  );
}

export default TaskBoard;
