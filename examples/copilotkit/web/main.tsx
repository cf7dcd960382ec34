import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '@copilotkit/react-core/v2/styles.css';
import './app.css';
import { App } from './App';

// CopilotKit's styles go dark under a `.dark` ancestor, not by themselves: follow the system's choice.
const dark = window.matchMedia('(prefers-color-scheme: dark)');
const followScheme = () => document.documentElement.classList.toggle('dark', dark.matches);
followScheme();
dark.addEventListener('change', followScheme);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
